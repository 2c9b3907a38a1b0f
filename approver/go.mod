module github.com/basis-go/basis/approver

go 1.25.0
