# Install layout (cmake --install build --prefix P) and packaging (cmake/package.cmake):
#   P/bin/specprobe                                   the tool (one static-runtime binary)
#   P/share/man/man1/specprobe.1                      man page
#   P/share/bash-completion/completions/specprobe     bash completion
#   P/share/zsh/{site-functions,vendor-completions}/_specprobe  zsh completion (upstream, Debian)
#   P/share/fish/vendor_completions.d/specprobe.fish  fish completion
#   P/share/specprobe/schema/report-*.json            JSON report schema (data: kept where images
#                                                     strip /usr/share/doc)
#   P/share/doc/specprobe/                            README, install/CI/facts docs, rule pages,
#                                                     bundled examples (seed configs, config.json)
include(GNUInstallDirs)

install(TARGETS specprobe RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

install(FILES ${CMAKE_SOURCE_DIR}/docs/man/specprobe.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

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

install(FILES ${CMAKE_SOURCE_DIR}/LICENSE ${CMAKE_SOURCE_DIR}/README.md ${CMAKE_SOURCE_DIR}/docs/install.md ${CMAKE_SOURCE_DIR}/docs/ci.md
  ${CMAKE_SOURCE_DIR}/docs/facts.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/rules/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/rules
  FILES_MATCHING PATTERN "*.md")
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)

include(${CMAKE_SOURCE_DIR}/cmake/package.cmake)
