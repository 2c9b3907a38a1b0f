module github.com/basis-go/basis/examples

go 1.26.0
