// Package declared turns the tools a workspace declares in
// .basis/tools.json into tools the runtime can run: a name, a description,
// a JSON schema and an argv command. The model fills in the schema; the
// object is written to the program's stdin; what the program prints is the
// result. There is no shell anywhere on the path.
package declared
