module github.com/basis-go/basis/configfile

go 1.26.0
