module github.com/basis-go/basis/subprocess

go 1.25.0
