module github.com/basis-go/basis/mcpbind

go 1.26.0
