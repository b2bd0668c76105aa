# Install layout (cmake --install build --prefix P) and packaging (cmake/package.cmake):
#   P/bin/specprobe                                   the tool (one static-runtime binary)
#   P/share/man/man1/specprobe.1.gz                   man page (gzip -9n, as Debian policy asks)
#   P/share/bash-completion/completions/specprobe     bash completion
#   P/share/zsh/{site-functions,vendor-completions}/_specprobe  zsh completion (upstream, Debian)
#   P/share/fish/vendor_completions.d/specprobe.fish  fish completion
#   P/share/specprobe/schema/report-*.json            JSON report schema (data: kept where images
#                                                     strip /usr/share/doc)
#   P/share/doc/specprobe/                            README, LICENSE, copyright and changelog.gz
#                                                     (Debian's forms), install/CI/facts docs, rule
#                                                     pages, bundled examples (seed configs, config.json)
include(GNUInstallDirs)

install(TARGETS specprobe RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# Debian's policy (and lintian) want the man page and the changelog compressed with gzip -9n (no
# name, no time stamp: the same bytes on every build), and the licence as a machine-readable
# copyright file. cmake/debian/changelog is the release history in Debian's format; its first
# entry must be this version.
file(STRINGS ${CMAKE_SOURCE_DIR}/cmake/debian/changelog _specprobe_changelog_head LIMIT_COUNT 1)
if(NOT _specprobe_changelog_head MATCHES "^specprobe \\(${PROJECT_VERSION}\\) ")
  message(FATAL_ERROR "cmake/debian/changelog:1: the first entry is not version ${PROJECT_VERSION} "
    "(project(VERSION)): add an entry for the release")
endif()
find_program(SPECPROBE_GZIP gzip REQUIRED)
set(_specprobe_pkgdocs ${CMAKE_BINARY_DIR}/package-docs)
add_custom_command(OUTPUT ${_specprobe_pkgdocs}/specprobe.1.gz ${_specprobe_pkgdocs}/changelog.gz
  COMMAND ${CMAKE_COMMAND} -E make_directory ${_specprobe_pkgdocs}
  COMMAND ${SPECPROBE_GZIP} -9nc ${CMAKE_SOURCE_DIR}/docs/man/specprobe.1 > ${_specprobe_pkgdocs}/specprobe.1.gz
  COMMAND ${SPECPROBE_GZIP} -9nc ${CMAKE_SOURCE_DIR}/cmake/debian/changelog > ${_specprobe_pkgdocs}/changelog.gz
  DEPENDS ${CMAKE_SOURCE_DIR}/docs/man/specprobe.1 ${CMAKE_SOURCE_DIR}/cmake/debian/changelog
  COMMENT "Compressing the man page and the changelog" VERBATIM)
add_custom_target(specprobe_package_docs ALL DEPENDS ${_specprobe_pkgdocs}/specprobe.1.gz ${_specprobe_pkgdocs}/changelog.gz)
configure_file(${CMAKE_SOURCE_DIR}/cmake/debian/copyright ${_specprobe_pkgdocs}/copyright @ONLY)

install(FILES ${_specprobe_pkgdocs}/specprobe.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

# Shell completions where each shell looks by default. zsh: upstream zsh searches
# $prefix/share/zsh/site-functions, Debian's and Ubuntu's zsh search /usr/share/zsh/vendor-completions
# (and /usr/local/share/zsh/site-functions) instead, so _specprobe goes to both.
install(FILES ${CMAKE_SOURCE_DIR}/contrib/completions/specprobe.bash
  DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/bash-completion/completions RENAME specprobe)
install(FILES ${CMAKE_SOURCE_DIR}/contrib/completions/_specprobe
  DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/zsh/site-functions)
install(FILES ${CMAKE_SOURCE_DIR}/contrib/completions/_specprobe
  DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/zsh/vendor-completions)
install(FILES ${CMAKE_SOURCE_DIR}/contrib/completions/specprobe.fish
  DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/fish/vendor_completions.d)

file(GLOB _specprobe_schemas ${CMAKE_SOURCE_DIR}/docs/schema/*.json)
install(FILES ${_specprobe_schemas} DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/specprobe/schema)

install(FILES ${_specprobe_pkgdocs}/copyright ${_specprobe_pkgdocs}/changelog.gz DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES ${CMAKE_SOURCE_DIR}/LICENSE ${CMAKE_SOURCE_DIR}/README.md ${CMAKE_SOURCE_DIR}/docs/install.md ${CMAKE_SOURCE_DIR}/docs/ci.md
  ${CMAKE_SOURCE_DIR}/docs/facts.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/rules/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/rules
  FILES_MATCHING PATTERN "*.md")
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)

include(${CMAKE_SOURCE_DIR}/cmake/package.cmake)
