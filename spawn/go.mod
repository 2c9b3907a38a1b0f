module github.com/basis-go/basis/spawn

go 1.25.0
