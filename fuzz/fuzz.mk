# libFuzzer harnesses (./configure CC=clang --enable-fuzzing)
