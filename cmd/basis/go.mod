module github.com/basis-go/basis/cmd/basis

go 1.25.0
