module github.com/basis-go/basis/subprocess

go 1.26.0
