package configfile_test

import (
	"errors"
	"fmt"

	"github.com/basis-go/basis/configfile"
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

func ExampleExpand() {
	env := map[string]string{"API_TOKEN": "t0k3n"}
	lookup := func(name string) (string, bool) { v, ok := env[name]; return v, ok }
	for _, s := range []string{"Bearer ${API_TOKEN}", "${REGION:-eu-west-1}", "${MISSING}", "${API_TOKEN-x}"} {
		out, err := configfile.Expand(s, lookup)
		var xe *configfile.ExpandError
		if errors.As(err, &xe) {
			fmt.Printf("variable %q: %v\n", xe.Variable, err)
			continue
		}
		fmt.Println(len(out), "characters")
	}
	// Output:
	// 12 characters
	// 9 characters
	// variable "MISSING": variable MISSING is not set and has no default; set it, or write ${MISSING:-default}
	// variable "API_TOKEN": the placeholder at character 1 uses a form basis does not support; write ${API_TOKEN} or ${API_TOKEN:-default}
}
