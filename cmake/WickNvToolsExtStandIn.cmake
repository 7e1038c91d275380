# wick_nvtoolsext_stand_in(TOOLKIT_ROOT): CMake 3.25's FindCUDAToolkit marks CUDA::nvToolsExt
# deprecated without checking that the target exists, and CUDA 12.9 and later ship no
# libnvToolsExt (NVTX 3 is header-only): find_package(CUDAToolkit) then fails. On CMake older than
# 3.26, with a toolkit that lacks the library, this creates an empty imported target in its place
# first; wick never links it. Used by WickCuda.cmake and by the installed wickConfig.cmake.
function(wick_nvtoolsext_stand_in toolkit_root)
  file(GLOB found "${toolkit_root}/lib*/libnvToolsExt*" "${toolkit_root}/targets/*/lib/libnvToolsExt*")
  if(CMAKE_VERSION VERSION_LESS 3.26 AND NOT found AND NOT TARGET CUDA::nvToolsExt)
    add_library(CUDA::nvToolsExt INTERFACE IMPORTED)
  endif()
endfunction()
