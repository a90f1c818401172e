module libnettrace.dev/nettrace

go 1.19
