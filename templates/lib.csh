# csh has no functions, so the list filter below is spelled out for each list variable. Lists are split by tcsh's
# own PATH import: `setenv PATH "<list>"` fills the $path word array (spaces intact), then PATH is put back raw
# with setenv. Limitation: $path cannot hold an empty word, so an empty component comes back as "." (which csh
# treats the same way). Comparisons use `==` on quoted words (`=~` would glob). A drop entry that matched is blanked, so only the
# first copy goes ($path never holds an empty word).
