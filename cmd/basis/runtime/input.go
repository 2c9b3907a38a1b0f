package runtime

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/basis-go/basis/contract"
)

// ReadInput reads a call's input as a command line gives it: arg itself
// (a JSON object), @FILE for a file's content, or - for stdin. What it
// reads is bounded: one byte past [contract.MaxInputBytes], so that the
// call is refused for its size, but an endless file or stream does not
// fill memory. It returns when ctx is done, even while the read waits
// for input that never comes.
func ReadInput(ctx context.Context, arg string, stdin io.Reader) (json.RawMessage, error) {
	switch {
	case arg == "-":
		data, err := readBounded(ctx, stdin)
		if err != nil {
			return nil, fmt.Errorf("reading the input from stdin: %w", err)
		}
		return data, nil
	case strings.HasPrefix(arg, "@"):
		f, err := os.Open(arg[1:])
		if err != nil {
			return nil, fmt.Errorf("reading the input: %v", err)
		}
		defer f.Close()
		data, err := readBounded(ctx, f)
		if err != nil {
			return nil, fmt.Errorf("reading the input: %v", err)
		}
		return data, nil
	}
	return json.RawMessage(arg), nil
}

// readBounded reads r to its end or one byte past the input limit, or
// returns when ctx is done.
func readBounded(ctx context.Context, r io.Reader) ([]byte, error) {
	type read struct {
		data []byte
		err  error
	}
	done := make(chan read, 1)
	go func() {
		data, err := io.ReadAll(io.LimitReader(r, contract.MaxInputBytes+1))
		done <- read{data, err}
	}()
	select {
	case got := <-done:
		return got.data, got.err
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// NewCallID returns a fresh call id, prefix and 16 hex digits ("cli-…"),
// so that each call's audit records can be told from every other's.
func NewCallID(prefix string) string {
	var b [8]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return prefix + hex.EncodeToString(b[:])
}
