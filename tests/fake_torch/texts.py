"""The real error texts the fake torch packages raise; docs/design/checks.md section 4 says where each comes from."""

# The message as a Chinese-locale Windows prints it (Windows localises the system text, torch appends the English
# "Error loading ..."); the English form is "[WinError 1114] A dynamic link library (DLL) initialization routine
# failed. Error loading ...\torch\lib\c10.dll or one of its dependencies."
WINERROR_1114 = ("[WinError 1114] 动态链接库(DLL)初始化例程失败。 Error loading "
                 "c:\\users\\24303\\.conda\\envs\\pytorch\\lib\\site-packages\\torch\\lib\\c10.dll or one of its "
                 "dependencies.")

# WinError 126 (ERROR_MOD_NOT_FOUND, "The specified module could not be found") as a Chinese-locale Windows prints
# it; torch appends the same "Error loading ... or one of its dependencies." suffix (torch/__init__.py,
# _load_dll_libraries).
WINERROR_126 = ("[WinError 126] 找不到指定的模块。 Error loading "
                "C:\\Users\\xxx\\anaconda3\\envs\\pt\\lib\\site-packages\\torch\\lib\\fbgemm.dll or one of its "
                "dependencies.")

# NumPy 2's message for a module compiled against NumPy 1.x (numpy/core/_multiarray_umath.py, numpy 2.x); then the
# ImportError the module raises.
NUMPY_ABI_STDERR = (
    "\nA module that was compiled using NumPy 1.x cannot be run in\n"
    "NumPy 2.1.0 as it may crash. To support both 1.x and 2.x\n"
    "versions of NumPy, modules must be compiled with NumPy 2.0.\n"
    "Some module may need to rebuild instead e.g. with 'pybind11>=2.12'.\n\n"
    "If you are a user of the module, the easiest solution will be to\n"
    "downgrade to 'numpy<2' or try to upgrade the affected module.\n"
    "We expect that some modules will need time to support NumPy 2.\n\n"
    "AttributeError: _ARRAY_API not found\n")
NUMPY_ABI_ERROR = "numpy.core.multiarray failed to import"

# The Intel OpenMP runtime's error when two copies of it are loaded (libiomp5md.dll, Windows); the hint is the
# runtime's own text that follows it in every report.
OMP_15 = ("OMP: Error #15: Initializing libiomp5md.dll, but found libiomp5md.dll already initialized.\n"
          "OMP: Hint This means that multiple copies of the OpenMP runtime have been linked into the program. That is "
          "dangerous, since it can degrade performance or cause incorrect results. The best thing to do is to ensure "
          "that only a single OpenMP runtime is linked into the process, e.g. by avoiding static linking of the OpenMP "
          "runtime in any library. As an unsafe, unsupported, undocumented workaround you can set the environment "
          "variable KMP_DUPLICATE_LIB_OK=TRUE to allow the program to continue to execute, but that may cause crashes "
          "or silently produce incorrect results. For more information, please see "
          "http://www.intel.com/software/products/support/.\n")

# pip torch with LD_LIBRARY_PATH pointing at a system CUDA 12.1; the site-packages prefix is filled in by the fake.
UNDEFINED_SYMBOL = ("{site}/torch/lib/../../nvidia/cusparse/lib/libcusparse.so.12: undefined symbol: "
                    "__nvJitLinkAddData_12_1, version libnvJitLink.so.12")

# c10/cuda/CUDAFunctions.cpp (torch 2.x), the warning torch.cuda.is_available() emits on an old driver;
# the case: torch built for a newer CUDA than the driver supports. "found version 11040" = a driver whose maximum
# CUDA is 11.4.
DRIVER_TOO_OLD = ("CUDA initialization: The NVIDIA driver on your system is too old (found version 11040). Please "
                  "update your GPU driver by downloading and installing a new version from the URL: "
                  "http://www.nvidia.com/Download/index.aspx Alternatively, go to: https://pytorch.org to install a "
                  "PyTorch version that has been compiled with your version of the CUDA driver. (Triggered internally "
                  "at ../c10/cuda/CUDAFunctions.cpp:108.)")

# torch/cuda/__init__.py (_check_capability: incompatible_device_warn), the warning for an RTX 50xx on a build
# without sm_120; then the RuntimeError of the first kernel launch ("no kernel image is available for execution on
# the device").
SM_NOT_COMPATIBLE = ("\nNVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current "
                     "PyTorch installation.\nThe current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 "
                     "sm_75 sm_80 sm_86 sm_90.\nIf you want to use the NVIDIA GeForce RTX 5090 GPU with PyTorch, "
                     "please check the instructions at https://pytorch.org/get-started/locally/\n")
NO_KERNEL_IMAGE = ("CUDA error: no kernel image is available for execution on the device\n"
                   "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace "
                   "below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
                   "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n")
