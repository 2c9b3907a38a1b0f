module github.com/basis-go/basis/declared

go 1.25.0
