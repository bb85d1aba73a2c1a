# calibrate/bench/cuda.cmake: finds CUDA (nvcc, cudart, cuBLASLt) and NCCL; sets CALIBRATE_HAVE_CUDA.
# Included by calibrate/CMakeLists.txt and by the standalone calibrate/bench/CMakeLists.txt, so that the CUDA language
# is enabled in the directory that also holds the executable.
#
#   -DTRAINSIM_WITH_CUDA=AUTO|ON|OFF   AUTO (default): build `measure` when nvcc, cuBLAS and NCCL are all found
#   -DCMAKE_CUDA_ARCHITECTURES=...     default "80-real;90": SASS for A100 (sm_80) and H100/H200 (sm_90) plus
#                                      compute_90 PTX that the driver compiles for newer GPUs (B200 sm_100, ...). Add
#                                      native code for others with e.g. "80-real;90-real;100-real" (CMake syntax:
#                                      N-real = SASS only, N = SASS + PTX), or "native" on the GPU node itself.
#   -DNCCL_ROOT=/path                  where nccl.h and libnccl are when not beside CUDA (also $NCCL_HOME)

set(TRAINSIM_WITH_CUDA AUTO CACHE STRING "Build trainsim-calibrate measure with CUDA, cuBLAS and NCCL: AUTO, ON or OFF")
set_property(CACHE TRAINSIM_WITH_CUDA PROPERTY STRINGS AUTO ON OFF)

set(CALIBRATE_HAVE_CUDA OFF)
if(NOT TRAINSIM_WITH_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES "80-real;90")
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit)
  endif()
  find_path(NCCL_INCLUDE_DIR nccl.h
            HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} $ENV{NCCL_HOME} ${CUDAToolkit_INCLUDE_DIRS}
            PATH_SUFFIXES include)
  find_library(NCCL_LIBRARY NAMES nccl
               HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} $ENV{NCCL_HOME} ${CUDAToolkit_LIBRARY_DIR}
               PATH_SUFFIXES lib lib64)
  if(CMAKE_CUDA_COMPILER AND CUDAToolkit_FOUND AND TARGET CUDA::cublasLt AND NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
    set(CALIBRATE_HAVE_CUDA ON)
    if(NOT TARGET calibrate_nccl)
      add_library(calibrate_nccl UNKNOWN IMPORTED)
      set_target_properties(calibrate_nccl PROPERTIES IMPORTED_LOCATION "${NCCL_LIBRARY}"
                                                      INTERFACE_INCLUDE_DIRECTORIES "${NCCL_INCLUDE_DIR}")
    endif()
    message(STATUS "trainsim-calibrate measure: CUDA ${CUDAToolkit_VERSION}, NCCL ${NCCL_LIBRARY}, "
                   "architectures ${CMAKE_CUDA_ARCHITECTURES}")
  elseif(TRAINSIM_WITH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "TRAINSIM_WITH_CUDA=ON, but nvcc (${CMAKE_CUDA_COMPILER}), cuBLASLt or NCCL "
                        "(nccl.h: ${NCCL_INCLUDE_DIR}, libnccl: ${NCCL_LIBRARY}) was not found; set CUDAToolkit_ROOT "
                        "or NCCL_ROOT, or use TRAINSIM_WITH_CUDA=AUTO")
  endif()
endif()
if(NOT CALIBRATE_HAVE_CUDA)
  message(STATUS "trainsim-calibrate measure: built without CUDA/NCCL (it will say that no CUDA device was found)")
endif()
