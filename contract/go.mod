module github.com/basis-go/basis/contract

go 1.26.0
