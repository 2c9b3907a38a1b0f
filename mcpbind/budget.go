//go:build unix

package mcpbind

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/basis-go/basis/contract"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// defaultMaxOutputTokens is the output budget when neither the host, the
// operator nor the server's entry sets one: what Claude Code allows an
// MCP result.
const defaultMaxOutputTokens = 25_000

// bytesPerToken is how many bytes of text count as one token. Tokenizers
// differ by model and language; four bytes a token is the usual estimate
// for English and code, and errs on the side of more text for others.
const bytesPerToken = 4

// estimateTokens estimates how many tokens a model reads text as: its
// length in bytes divided by four, rounded up.
func estimateTokens(text string) int { return (len(text) + bytesPerToken - 1) / bytesPerToken }

// outputKeep is how long a kept result stays in the output directory: a
// Manager removes older ones the first time it keeps a result.
const outputKeep = 7 * 24 * time.Hour

// budget is the output budget of the server's results, in tokens; 0
// means none.
func (s *server) budget() int {
	mgr := s.m.opts.MaxOutputTokens
	switch {
	case mgr < 0:
		mgr = 0
	case mgr == 0:
		mgr = defaultMaxOutputTokens
		if s.m.cfg.MaxOutputTokens > 0 {
			mgr = s.m.cfg.MaxOutputTokens
		}
	}
	own := s.cfg.MaxOutputTokens
	switch {
	case own <= 0:
		return mgr
	case s.cfg.Origin.workspace() && mgr > 0:
		// A repository may keep its server's results shorter, never
		// longer than the operator allows.
		return min(own, mgr)
	}
	return own
}

// fitBudget returns text as the model reads it: whole when it fits the
// server's budget, else cut to the budget with a note that says so and
// where the whole text was kept.
func (s *server) fitBudget(text string) string {
	budget := s.budget()
	if budget <= 0 || estimateTokens(text) <= budget {
		return text
	}
	keep := budget * bytesPerToken
	cut := text[:keep]
	for range utf8.UTFMax - 1 {
		if r, size := utf8.DecodeLastRuneInString(cut); r != utf8.RuneError || size != 1 {
			break
		}
		cut = cut[:len(cut)-1] // never split a character
	}
	if i := strings.LastIndexByte(cut, '\n'); i >= len(cut)*9/10 {
		cut = cut[:i+1] // end on a whole line when one ends near the cut
	}
	path, err := s.m.keepOutput(s.cfg.Name, text)
	where := "the whole result is in " + path + "; read it in parts rather than whole"
	if err != nil {
		where = "the whole result could not be kept: " + err.Error()
	}
	if !strings.HasSuffix(cut, "\n") {
		cut += "\n"
	}
	return cut + "\n[basis: this result of MCP server " + printableName(s.cfg.Name) + " was cut to about " +
		strconv.Itoa(estimateTokens(cut)) + " of its " + strconv.Itoa(estimateTokens(text)) +
		" estimated tokens (1 token ≈ 4 bytes), its budget being " + strconv.Itoa(budget) + "; " + where + "]"
}

// outputDir is where whole results are kept.
func (m *Manager) outputDir() (string, error) {
	if m.opts.OutputDir != "" {
		return m.opts.OutputDir, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", errors.New("no cache directory: set $XDG_CACHE_HOME or $HOME")
	}
	return filepath.Join(cache, "basis", "mcp-output"), nil
}

// keepOutput writes a whole result to a new file of the output directory
// and returns its path. The directory is the user's own and no one
// else's (0700, and refused if another user owns it or it is a link);
// the file is new (never an existing file or a link planted in its
// place), 0600, with a random name. No sandboxed program can write
// there: the sandbox's writable cache is <cache>/basis/sandbox.
func (m *Manager) keepOutput(server, text string) (string, error) {
	dir, err := m.outputDir()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return "", fmt.Errorf("cannot create %s: %w", filepath.Dir(dir), errors.Unwrap(err))
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("cannot create %s: %w", dir, errors.Unwrap(err))
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", err
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return "", fmt.Errorf("%s is not a directory (a link, or a file); remove it", dir)
	case st == nil || int(st.Uid) != os.Geteuid():
		return "", fmt.Errorf("%s belongs to another user; remove it", dir)
	case fi.Mode().Perm()&0o077 != 0:
		if err := os.Chmod(dir, 0o700); err != nil {
			return "", err
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", err
	}
	defer root.Close()
	m.pruneOnce.Do(func() { prune(root) })
	var r [12]byte
	_, _ = rand.Read(r[:])
	name := sanitize(server) + "-" + time.Now().UTC().Format("20060102T150405") + "-" + hex.EncodeToString(r[:]) + ".txt"
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		_ = root.Remove(name)
		return "", err
	}
	if err := f.Close(); err != nil {
		_ = root.Remove(name)
		return "", err
	}
	return filepath.Join(dir, name), nil
}

// prune removes kept results older than outputKeep.
func prune(root *os.Root) {
	entries, err := fs.ReadDir(root.FS(), ".")
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".txt") {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > outputKeep {
			_ = root.Remove(e.Name())
		}
	}
}

// budgetResult applies the server's budget to what the model reads of out:
// its Text, and in its content the text blocks, which give way to one
// block holding the cut text (with the note) where the first of them
// stood. Images, audio, resources and structured content pass whole: only
// text is budgeted.
func (s *server) budgetResult(out *contract.Result) {
	cut := s.fitBudget(out.Text)
	if cut == out.Text {
		return
	}
	out.Text = cut
	if len(out.Content) == 0 {
		return
	}
	block, err := json.Marshal(&mcp.TextContent{Text: cut})
	if err != nil {
		return
	}
	content := make([]json.RawMessage, 0, len(out.Content)+1)
	placed := false
	for _, b := range out.Content {
		var kind struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(b, &kind) == nil && kind.Type == "text" {
			if !placed {
				content, placed = append(content, block), true
			}
			continue
		}
		content = append(content, b)
	}
	if !placed {
		content = append([]json.RawMessage{block}, content...)
	}
	out.Content = content
}
