module nettrace

go 1.19
