package configfile_test

import (
	"fmt"

	"github.com/basis-go/basis/contract/configfile"
)

func ExampleParse() {
	data := []byte("{\n  \"schema\": 1,\n  \"timout_ms\": 500\n}")
	doc, err := configfile.Parse(data)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range doc.Members() {
		if m.Key != "schema" && configfile.LooksLikeKey(m.Key) {
			line, col := configfile.LineCol(data, m.KeyOff)
			fmt.Printf("rules.json:%d:%d: unknown key %q\n", line, col, m.Key)
		}
	}
	// Output:
	// rules.json:3:3: unknown key "timout_ms"
}
