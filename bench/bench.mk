# make bench: see bench/README section in README.md
