-- Date: Wed Dec  2 01:09:47 2026
ancient = 86400
mrcMpathT = {}
spiderT = {
  ["/home/software/tools/eb_modulefiles/all/Compiler/GCC/10.2.0"] = {
    CUDA = {
      defaultA = {},
      defaultT = {},
      dirT = {},
      fileT = {
        ["CUDA/11.1.1"] = {
          Description = [[CUDA (formerly Compute Unified Device Architecture) is a parallel
 computing platform and programming model created by NVIDIA and implemented by the
 graphics processing units (GPUs) that they produce. CUDA gives developers access
 to the virtual instruction set and memory of the parallel computational elements in CUDA GPUs.]],
          URL = "https://developer.nvidia.com/cuda-toolkit",
          Version = "11.1.1",
          canonical = "11.1.1",
          changeMPATH = true,
          fn = "/home/software/tools/eb_modulefiles/all/Compiler/GCC/10.2.0/CUDA/11.1.1.lua",
          help = [[
Description
===========
CUDA (formerly Compute Unified Device Architecture) is a parallel
 computing platform and programming model created by NVIDIA and implemented by the
 graphics processing units (GPUs) that they produce. CUDA gives developers access
 to the virtual instruction set and memory of the parallel computational elements in CUDA GPUs.


More information
================
 - Homepage: https://developer.nvidia.com/cuda-toolkit
]],
          luaExt = 7,
          mpath = "/home/software/tools/eb_modulefiles/all/Compiler/GCC/10.2.0",
          pV = "000000011.000000001.000000001.*zfinal",
          wV = "000000011.000000001.000000001.*zfinal",
          whatis = {

                        [[Description: CUDA (formerly Compute Unified Device Architecture) is a parallel
 computing platform and programming model created by NVIDIA and implemented by the
 graphics processing units (GPUs) that they produce. CUDA gives developers access
 to the virtual instruction set and memory of the parallel computational elements in CUDA GPUs.]]
            , "Homepage: https://developer.nvidia.com/cuda-toolkit", "URL: https://developer.nvidia.com/cuda-toolkit",
          },
        },
      },
    },
  },
  ["/home/software/tools/eb_modulefiles/all/Compiler/GCC/8.3.0"] = {
    CUDA = {
      defaultA = {},
      defaultT = {},
      dirT = {},
      fileT = {
        ["CUDA/10.1.243"] = {
          Description = [[CUDA (formerly Compute Unified Device Architecture) is a parallel
 computing platform and programming model created by NVIDIA and implemented by the
 graphics processing units (GPUs) that they produce. CUDA gives developers access
 to the virtual instruction set and memory of the parallel computational elements in CUDA GPUs.]],
          URL = "https://developer.nvidia.com/cuda-toolkit",
          Version = "10.1.243",
          canonical = "10.1.243",
          changeMPATH = true,
          fn = "/home/software/tools/eb_modulefiles/all/Compiler/GCC/8.3.0/CUDA/10.1.243.lua",
          help = [[
Description
===========
CUDA (formerly Compute Unified Device Architecture) is a parallel
 computing platform and programming model created by NVIDIA and implemented by the
 graphics processing units (GPUs) that they produce. CUDA gives developers access
 to the virtual instruction set and memory of the parallel computational elements in CUDA GPUs.


More information
================
 - Homepage: https://developer.nvidia.com/cuda-toolkit
]],
          lpathA = {
            ["/home/software/EasyBuild/software/CUDA/10.1.243-GCC-8.3.0/extras/CUPTI/lib64"] = 1,
            ["/home/software/EasyBuild/software/CUDA/10.1.243-GCC-8.3.0/lib"] = 1,
            ["/home/software/EasyBuild/software/CUDA/10.1.243-GCC-8.3.0/nvvm/lib64"] = 1,
          },
          luaExt = 9,
          mpath = "/home/software/tools/eb_modulefiles/all/Compiler/GCC/8.3.0",
          pV = "000000010.000000001.000000243.*zfinal",
          pathA = {
            ["/home/software/EasyBuild/software/CUDA/10.1.243-GCC-8.3.0"] = 1,
            ["/home/software/EasyBuild/software/CUDA/10.1.243-GCC-8.3.0/bin"] = 1,
            ["/home/software/EasyBuild/software/CUDA/10.1.243-GCC-8.3.0/nvvm/bin"] = 1,
          },
          wV = "000000010.000000001.000000243.*zfinal",
          whatis = {

                        [[Description: CUDA (formerly Compute Unified Device Architecture) is a parallel
 computing platform and programming model created by NVIDIA and implemented by the
 graphics processing units (GPUs) that they produce. CUDA gives developers access
 to the virtual instruction set and memory of the parallel computational elements in CUDA GPUs.]]
            , "Homepage: https://developer.nvidia.com/cuda-toolkit", "URL: https://developer.nvidia.com/cuda-toolkit",
          },
        },
      },
    },
  },
  ["/home/software/tools/eb_modulefiles/all/Core"] = {
    CUDA = {
      defaultA = {},
      defaultT = {},
      dirT = {},
      fileT = {
        ["CUDA/11.3.1"] = {
          Description = [[CUDA (formerly Compute Unified Device Architecture) is a parallel
 computing platform and programming model created by NVIDIA and implemented by the
 graphics processing units (GPUs) that they produce. CUDA gives developers access
 to the virtual instruction set and memory of the parallel computational elements in CUDA GPUs.]],
          URL = "https://developer.nvidia.com/cuda-toolkit",
          Version = "11.3.1",
          canonical = "11.3.1",
          fn = "/home/software/tools/eb_modulefiles/all/Core/CUDA/11.3.1.lua",
          help = [[
Description
===========
CUDA (formerly Compute Unified Device Architecture) is a parallel
 computing platform and programming model created by NVIDIA and implemented by the
 graphics processing units (GPUs) that they produce. CUDA gives developers access
 to the virtual instruction set and memory of the parallel computational elements in CUDA GPUs.


More information
================
 - Homepage: https://developer.nvidia.com/cuda-toolkit
]],
          lpathA = {
            ["/home/software/EasyBuild/software/CUDA/11.3.1/extras/CUPTI/lib64"] = 1,
            ["/home/software/EasyBuild/software/CUDA/11.3.1/lib"] = 1,
            ["/home/software/EasyBuild/software/CUDA/11.3.1/nvvm/lib64"] = 1,
          },
          luaExt = 7,
          mpath = "/home/software/tools/eb_modulefiles/all/Core",
          pV = "000000011.000000003.000000001.*zfinal",
          pathA = {
            ["/home/software/EasyBuild/software/CUDA/11.3.1"] = 1,
            ["/home/software/EasyBuild/software/CUDA/11.3.1/bin"] = 1,
            ["/home/software/EasyBuild/software/CUDA/11.3.1/nvvm/bin"] = 1,
          },
          wV = "000000011.000000003.000000001.*zfinal",
          whatis = {

                        [[Description: CUDA (formerly Compute Unified Device Architecture) is a parallel
 computing platform and programming model created by NVIDIA and implemented by the
 graphics processing units (GPUs) that they produce. CUDA gives developers access
 to the virtual instruction set and memory of the parallel computational elements in CUDA GPUs.]]
            , "Homepage: https://developer.nvidia.com/cuda-toolkit", "URL: https://developer.nvidia.com/cuda-toolkit",
          },
        },
        ["CUDA/11.4.1"] = {
          Description = [[CUDA (formerly Compute Unified Device Architecture) is a parallel
 computing platform and programming model created by NVIDIA and implemented by the
 graphics processing units (GPUs) that they produce. CUDA gives developers access
 to the virtual instruction set and memory of the parallel computational elements in CUDA GPUs.]],
          URL = "https://developer.nvidia.com/cuda-toolkit",
          Version = "11.4.1",
          canonical = "11.4.1",
          fn = "/home/software/tools/eb_modulefiles/all/Core/CUDA/11.4.1.lua",
          help = [[
Description
===========
CUDA (formerly Compute Unified Device Architecture) is a parallel
 computing platform and programming model created by NVIDIA and implemented by the
 graphics processing units (GPUs) that they produce. CUDA gives developers access
 to the virtual instruction set and memory of the parallel computational elements in CUDA GPUs.


More information
================
 - Homepage: https://developer.nvidia.com/cuda-toolkit
]],
          lpathA = {
            ["/home/software/EasyBuild/software/CUDA/11.4.1/extras/CUPTI/lib64"] = 1,
            ["/home/software/EasyBuild/software/CUDA/11.4.1/lib"] = 1,
            ["/home/software/EasyBuild/software/CUDA/11.4.1/nvvm/lib64"] = 1,
          },
          luaExt = 7,
          mpath = "/home/software/tools/eb_modulefiles/all/Core",
          pV = "000000011.000000004.000000001.*zfinal",
          pathA = {
            ["/home/software/EasyBuild/software/CUDA/11.4.1"] = 1,
            ["/home/software/EasyBuild/software/CUDA/11.4.1/bin"] = 1,
            ["/home/software/EasyBuild/software/CUDA/11.4.1/nvvm/bin"] = 1,
          },
          wV = "000000011.000000004.000000001.*zfinal",
          whatis = {

                        [[Description: CUDA (formerly Compute Unified Device Architecture) is a parallel
 computing platform and programming model created by NVIDIA and implemented by the
 graphics processing units (GPUs) that they produce. CUDA gives developers access
 to the virtual instruction set and memory of the parallel computational elements in CUDA GPUs.]]
            , "Homepage: https://developer.nvidia.com/cuda-toolkit", "URL: https://developer.nvidia.com/cuda-toolkit",
          },
        },
      },
    },
    CUDAcore = {
      defaultA = {},
      defaultT = {},
      dirT = {},
      fileT = {
        ["CUDAcore/11.1.1"] = {
          Description = [[CUDA (formerly Compute Unified Device Architecture) is a parallel
 computing platform and programming model created by NVIDIA and implemented by the
 graphics processing units (GPUs) that they produce. CUDA gives developers access
 to the virtual instruction set and memory of the parallel computational elements in CUDA GPUs.]],
          URL = "https://developer.nvidia.com/cuda-toolkit",
          Version = "11.1.1",
          canonical = "11.1.1",
          fn = "/home/software/tools/eb_modulefiles/all/Core/CUDAcore/11.1.1.lua",
          help = [[
Description
===========
CUDA (formerly Compute Unified Device Architecture) is a parallel
 computing platform and programming model created by NVIDIA and implemented by the
 graphics processing units (GPUs) that they produce. CUDA gives developers access
 to the virtual instruction set and memory of the parallel computational elements in CUDA GPUs.


More information
================
 - Homepage: https://developer.nvidia.com/cuda-toolkit
]],
          lpathA = {
            ["/home/software/EasyBuild/software/CUDAcore/11.1.1/extras/CUPTI/lib64"] = 1,
            ["/home/software/EasyBuild/software/CUDAcore/11.1.1/lib"] = 1,
            ["/home/software/EasyBuild/software/CUDAcore/11.1.1/nvvm/lib64"] = 1,
          },
          luaExt = 7,
          mpath = "/home/software/tools/eb_modulefiles/all/Core",
          pV = "000000011.000000001.000000001.*zfinal",
          pathA = {
            ["/home/software/EasyBuild/software/CUDAcore/11.1.1"] = 1,
            ["/home/software/EasyBuild/software/CUDAcore/11.1.1/bin"] = 1,
            ["/home/software/EasyBuild/software/CUDAcore/11.1.1/nvvm/bin"] = 1,
          },
          wV = "000000011.000000001.000000001.*zfinal",
          whatis = {

                        [[Description: CUDA (formerly Compute Unified Device Architecture) is a parallel
 computing platform and programming model created by NVIDIA and implemented by the
 graphics processing units (GPUs) that they produce. CUDA gives developers access
 to the virtual instruction set and memory of the parallel computational elements in CUDA GPUs.]]
            , "Homepage: https://developer.nvidia.com/cuda-toolkit", "URL: https://developer.nvidia.com/cuda-toolkit",
          },
        },
      },
    },
    GCC = {
      defaultA = {},
      defaultT = {},
      dirT = {},
      fileT = {
        ["GCC/10.2.0"] = {
          Description = [[The GNU Compiler Collection includes front ends for C, C++, Objective-C, Fortran, Java, and Ada,
 as well as libraries for these languages (libstdc++, libgcj,...).]],
          URL = "https://gcc.gnu.org/",
          Version = "10.2.0",
          canonical = "10.2.0",
          changeMPATH = true,
          fn = "/home/software/tools/eb_modulefiles/all/Core/GCC/10.2.0.lua",
          help = [[
Description
===========
The GNU Compiler Collection includes front ends for C, C++, Objective-C, Fortran, Java, and Ada,
 as well as libraries for these languages (libstdc++, libgcj,...).


More information
================
 - Homepage: https://gcc.gnu.org/
]],
          luaExt = 7,
          mpath = "/home/software/tools/eb_modulefiles/all/Core",
          pV = "000000010.000000002.*zfinal",
          wV = "000000010.000000002.*zfinal",
          whatis = {

                        [[Description: The GNU Compiler Collection includes front ends for C, C++, Objective-C, Fortran, Java, and Ada,
 as well as libraries for these languages (libstdc++, libgcj,...).]]
            , "Homepage: https://gcc.gnu.org/", "URL: https://gcc.gnu.org/",
          },
        },
        ["GCC/8.3.0"] = {
          Description = [[The GNU Compiler Collection includes front ends for C, C++, Objective-C, Fortran, Java, and Ada,
 as well as libraries for these languages (libstdc++, libgcj,...).]],
          URL = "http://gcc.gnu.org/",
          Version = "8.3.0",
          canonical = "8.3.0",
          changeMPATH = true,
          fn = "/home/software/tools/eb_modulefiles/all/Core/GCC/8.3.0.lua",
          help = [[
Description
===========
The GNU Compiler Collection includes front ends for C, C++, Objective-C, Fortran, Java, and Ada,
 as well as libraries for these languages (libstdc++, libgcj,...).


More information
================
 - Homepage: http://gcc.gnu.org/
]],
          luaExt = 6,
          mpath = "/home/software/tools/eb_modulefiles/all/Core",
          pV = "000000008.000000003.*zfinal",
          wV = "000000008.000000003.*zfinal",
          whatis = {

                        [[Description: The GNU Compiler Collection includes front ends for C, C++, Objective-C, Fortran, Java, and Ada,
 as well as libraries for these languages (libstdc++, libgcj,...).]]
            , "Homepage: http://gcc.gnu.org/", "URL: http://gcc.gnu.org/",
          },
        },
      },
    },
  },
  version = 5,
}
mpathMapT = {
  ["/home/software/tools/eb_modulefiles/all/Compiler/GCC-CUDA/10.2.0-11.1.1"] = {
    ["CUDA/11.1.1"] = "/home/software/tools/eb_modulefiles/all/Compiler/GCC/10.2.0",
  },
  ["/home/software/tools/eb_modulefiles/all/Compiler/GCC-CUDA/8.3.0-10.1.243"] = {
    ["CUDA/10.1.243"] = "/home/software/tools/eb_modulefiles/all/Compiler/GCC/8.3.0",
  },
  ["/home/software/tools/eb_modulefiles/all/Compiler/GCC/10.2.0"] = {
    ["GCC/10.2.0"] = "/home/software/tools/eb_modulefiles/all/Core",
  },
  ["/home/software/tools/eb_modulefiles/all/Compiler/GCC/8.3.0"] = {
    ["GCC/8.3.0"] = "/home/software/tools/eb_modulefiles/all/Core",
  },
}
