module github.com/basis-go/basis/e2e

go 1.26.0
