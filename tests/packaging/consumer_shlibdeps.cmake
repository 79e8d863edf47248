# ctest package.deb.consumer_shlibdeps: a program that calls the C API, packaged
# the way Debian packages are, gets a versioned dependency on hsa-hotswap from
# dpkg-shlibdeps, although the library's SONAME (libhsa-hotswap.so) has no
# version to derive one from: the runtime package's symbols file provides it.
#   1. unpack the /usr DEBs of package.build.usr into a root, and the runtime
#      one as a package being built (debian/hsa-hotswap, with DEBIAN/symbols);
#   2. build tests/consumer against that root with find_package(hotswap);
#   3. dpkg-shlibdeps on consumer_c, installed as debian/consumer/usr/bin:
#      expects "hsa-hotswap (>= <version of the newest symbol it uses>)";
#   4. the same without the symbols file must fail to name hsa-hotswap (so the
#      check can fail, and shows what the file is for).
# Inputs: SCRATCH (package.build.usr's), LIBDIR, CONSUMER_SOURCE_DIR, GENERATOR,
#         BUILD_TYPE, VERSION, HSA_DIR, COMGR_DIR, DPKG, DPKG_DEB, DPKG_SHLIBDEPS.
cmake_minimum_required(VERSION 3.22)
include("${CMAKE_CURRENT_LIST_DIR}/../cmake/common.cmake")
hotswap_require_tools(DPKG DPKG_DEB DPKG_SHLIBDEPS)

set(_release "$ENV{HOTSWAP_PACKAGE_RELEASE}")
if(_release STREQUAL "")
  set(_release 1)
endif()
capture(_arch "${DPKG}" --print-architecture)
set(_work "${SCRATCH}/consumer-shlibdeps")
file(REMOVE_RECURSE "${_work}")
set(_root "${_work}/root")
file(MAKE_DIRECTORY "${_root}" "${_work}/src/debian")
set(_runtime_deb "${SCRATCH}/packages/hsa-hotswap_${VERSION}-${_release}_${_arch}.deb")
set(_dev_deb "${SCRATCH}/packages/hsa-hotswap-dev_${VERSION}-${_release}_${_arch}.deb")
foreach(_deb IN ITEMS "${_runtime_deb}" "${_dev_deb}")
  if(NOT EXISTS "${_deb}")
    message(FATAL_ERROR "missing ${_deb} (package.build.usr builds it)")
  endif()
  run("${DPKG_DEB}" -x "${_deb}" "${_root}")
endforeach()
set(_pkgtree "${_work}/src")
run("${DPKG_DEB}" -R "${_runtime_deb}" "${_pkgtree}/debian/hsa-hotswap")
file(WRITE "${_pkgtree}/debian/control"
  "Source: hotswap-consumer\n\nPackage: hsa-hotswap\nArchitecture: any\n\n"
  "Package: hotswap-consumer\nArchitecture: any\n")

# The consumer, against the unpacked packages only (no build tree, no registry).
run("${CMAKE_COMMAND}" -S "${CONSUMER_SOURCE_DIR}" -B "${_work}/build" -G "${GENERATOR}"
    "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}" "-DCMAKE_PREFIX_PATH=${_root}/usr"
    "-Dhsa-runtime64_DIR=${HSA_DIR}" "-Damd_comgr_DIR=${COMGR_DIR}"
    -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON
    "-DEXPECTED_TOOL_LIBRARY=${_root}/usr/${LIBDIR}/libhsa-hotswap.so")
run("${CMAKE_COMMAND}" --build "${_work}/build" --config "${BUILD_TYPE}" --target consumer_c)
file(MAKE_DIRECTORY "${_pkgtree}/debian/hotswap-consumer/usr/bin")
file(COPY "${_work}/build/consumer_c" DESTINATION "${_pkgtree}/debian/hotswap-consumer/usr/bin")

function(shlibdeps out_var)
  execute_process(
    COMMAND "${DPKG_SHLIBDEPS}" -O "-l${_pkgtree}/debian/hsa-hotswap/usr/${LIBDIR}"
            -e debian/hotswap-consumer/usr/bin/consumer_c
    WORKING_DIRECTORY "${_pkgtree}"
    RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err OUTPUT_STRIP_TRAILING_WHITESPACE)
  message(STATUS "dpkg-shlibdeps (exit ${_rc}): ${_out}\n${_err}")
  set(${out_var} "${_out}" PARENT_SCOPE)
endfunction()

shlibdeps(_deps)
if(NOT _deps MATCHES "^shlibs:Depends=(.*, )?hsa-hotswap \\(>= ${VERSION}\\)(,|$)")
  message(FATAL_ERROR "the consumer's dependencies lack 'hsa-hotswap (>= ${VERSION})': ${_deps}")
endif()

file(REMOVE "${_pkgtree}/debian/hsa-hotswap/DEBIAN/symbols")
shlibdeps(_deps)
if(_deps MATCHES "hsa-hotswap")
  message(FATAL_ERROR "without the symbols file dpkg-shlibdeps still named hsa-hotswap: "
                      "the test does not show what the file provides: ${_deps}")
endif()
message(STATUS "a consumer of the C API depends on hsa-hotswap (>= ${VERSION}) through the symbols file")
