# Decides WICK_WITH_CUDA from WICK_CUDA (AUTO|ON|OFF) and enables the CUDA language.
# Architectures default to sm_80 (SASS) and sm_90 (SASS + PTX); override with
# -DCMAKE_CUDA_ARCHITECTURES=... ("native" needs a GPU, so it is never the default).
set(WICK_WITH_CUDA OFF)
if(NOT WICK_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES "80-real;90")
    endif()
    set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
    enable_language(CUDA)
    # CMake 3.25's FindCUDAToolkit marks CUDA::nvToolsExt deprecated without checking that the
    # target exists, and CUDA 12.9 and later ship no libnvToolsExt (NVTX 3 is header-only): the
    # configure then fails. An empty imported target stands in for it; wick never links it.
    file(GLOB wick_nvtoolsext "${CMAKE_CUDA_COMPILER_TOOLKIT_ROOT}/lib*/libnvToolsExt*"
         "${CMAKE_CUDA_COMPILER_TOOLKIT_ROOT}/targets/*/lib/libnvToolsExt*")
    if(CMAKE_VERSION VERSION_LESS 3.26 AND NOT wick_nvtoolsext AND NOT TARGET CUDA::nvToolsExt)
      add_library(CUDA::nvToolsExt INTERFACE IMPORTED)
    endif()
    find_package(CUDAToolkit REQUIRED)
    set(WICK_WITH_CUDA ON)
    message(STATUS "wick: CUDA backend ON (${CMAKE_CUDA_COMPILER}, architectures ${CMAKE_CUDA_ARCHITECTURES})")
  elseif(WICK_CUDA STREQUAL "ON")
    message(FATAL_ERROR "WICK_CUDA=ON but no CUDA compiler was found (looked for /usr/local/cuda/bin/nvcc)")
  else()
    message(STATUS "wick: CUDA toolkit not found, building CPU-only")
  endif()
else()
  message(STATUS "wick: CUDA backend OFF (WICK_CUDA=OFF)")
endif()
