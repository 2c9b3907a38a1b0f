//go:build unix

package declared

import (
	"bufio"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/subprocess"
)

// program is the absolute path this tool's command runs now.
func (t *Tool) program() (string, error) {
	run := t.spec.run()
	return subprocess.ResolveProgram(run.argv[0], t.spec.Root, run.env)
}

// workdir is the directory the program starts in, worked out now: the
// expanded cwd as loaded ("" for the root) — except for a workspace tool
// with a cwd, whose cwd is resolved here, at each preview and each run,
// symbolic links followed, and must be inside the workspace: a program
// the sandbox let write there could have replaced a directory with a
// link to anywhere since the tool was loaded. Then the real path is
// returned, so what starts in it is not that path's next link. An error
// is an [*UnavailableError] for a cwd outside the workspace, and
// configfile's (or the operating system's) reason otherwise.
func (t *Tool) workdir() (string, error) {
	run := t.spec.run()
	if !t.state.workspace || run.dir == "" {
		return run.dir, nil
	}
	real, err := configfile.WithinRoot(t.spec.Root, run.dir)
	if errors.Is(err, configfile.ErrOutsideRoot) {
		at := *t.state.cwdAt
		at.Err = outsideWorkspace(err)
		return "", &UnavailableError{Tool: t.spec.Name, Source: t.spec.Source, Problems: []*configfile.Error{&at}}
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		// The operating system's reason without the path, which may
		// hold an expanded placeholder: errors are printed, and encoded.
		err = pe.Err
	}
	return real, err
}

// workdirRefusal is a preview's refusal for workdir's error.
func (t *Tool) workdirRefusal(err error) error {
	var u *UnavailableError
	if errors.As(err, &u) {
		return u
	}
	return &refusedError{
		msg:    t.spec.Name + " cannot run: " + t.workdirFault(err),
		causes: []error{contract.ErrRefused, errCannotStart, err},
	}
}

// workdirFault says why a workspace tool's cwd cannot be used, naming the
// field and its place in the manifest, never the path: it may hold an
// expanded placeholder.
func (t *Tool) workdirFault(err error) string {
	at := t.state.cwdAt
	where := "its working directory (cwd, " + at.File
	if at.Line > 0 {
		where += ":" + strconv.Itoa(at.Line) + ":" + strconv.Itoa(at.Column)
	}
	where += ")"
	if errors.Is(err, fs.ErrNotExist) {
		return where + " does not exist; create it, or change cwd in " + t.spec.Source
	}
	return where + " cannot be resolved: " + configfile.Reason(err)
}

// programFault says why a program could not be resolved, naming it as
// written in the manifest.
func (t *Tool) programFault(err error) string {
	written := quoteWord(t.spec.Command[0])
	switch {
	case errors.Is(err, subprocess.ErrNotFound):
		return "its program " + written + " is in no directory of the PATH it gets; install it, or set PATH in the tool's env in " + t.spec.Source
	case errors.Is(err, fs.ErrPermission):
		return "its program " + written + " is found in PATH but is not executable"
	}
	return "its program " + written + " cannot be found: " + configfile.Reason(err)
}

// CheckStart reports whether the tool's program could start now, without
// running it: nil, or an error saying what stops it. An unavailable tool
// gives its [*UnavailableError]. Otherwise the error is a
// [*configfile.Error] wrapping the operating system's reason (so
// errors.Is(err, fs.ErrNotExist) and fs.ErrPermission work), located at
// command[0] or cwd in the manifest: a working directory that is missing
// or not a directory; a program not found in PATH, missing, a directory,
// not a regular file or not executable; a #! interpreter that is missing.
// `basis check --start` reports these; a plain load cannot, because a
// program may be built after basis starts.
func (t *Tool) CheckStart() error {
	if u := t.state.unavailable; u != nil {
		return u
	}
	run := t.spec.run()
	dir := t.spec.Root
	if run.dir != "" {
		dir = run.dir
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(t.spec.Root, dir)
		}
	}
	if t.state.workspace && run.dir != "" {
		real, err := t.workdir()
		var u *UnavailableError
		if errors.As(err, &u) {
			return u
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return t.cannotStart(t.state.cwdAt, err, t.workdirFault(err))
		}
		if err == nil {
			dir = real
		}
	}
	where := "the workspace root"
	if t.spec.Cwd != "" {
		where = "the working directory " + quoteWord(t.spec.Cwd)
	}
	if info, err := os.Stat(dir); err != nil {
		return t.cannotStart(t.state.cwdAt, err, where+" cannot be entered: "+configfile.Reason(err))
	} else if !info.IsDir() {
		return t.cannotStart(t.state.cwdAt, syscall.ENOTDIR, where+" is not a directory")
	}

	program, err := t.program()
	if err != nil {
		return t.cannotStart(t.state.programAt, err, t.programFault(err))
	}
	written := "the program " + quoteWord(t.spec.Command[0])
	info, err := os.Stat(program)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return t.cannotStart(t.state.programAt, err, written+" does not exist")
	case err != nil:
		return t.cannotStart(t.state.programAt, err, written+" cannot be examined: "+configfile.Reason(err))
	case info.IsDir():
		return t.cannotStart(t.state.programAt, syscall.EISDIR, written+" is a directory")
	case !info.Mode().IsRegular():
		return t.cannotStart(t.state.programAt, syscall.EACCES, written+" is not a regular file")
	}
	const executable = 0x1 // X_OK
	if err := syscall.Access(program, executable); err != nil {
		return t.cannotStart(t.state.programAt, err, written+" is not executable: "+configfile.Reason(err)+"; chmod +x it")
	}
	if interp, ok := interpreter(program); ok {
		if _, err := os.Stat(interp); err != nil {
			return t.cannotStart(t.state.programAt, subprocess.ErrBadInterpreter, written+" names an interpreter on its #! line that "+missingOr(err))
		}
	}
	return nil
}

func missingOr(err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return "does not exist"
	}
	return "cannot be examined: " + configfile.Reason(err)
}

// cannotStart builds CheckStart's error at a place in the manifest.
func (t *Tool) cannotStart(at *configfile.Error, cause error, text string) error {
	if at == nil {
		at = t.state.programAt
	}
	e := *at
	e.Err = &problem{kind: errCannotStart, cause: cause, text: text}
	return &e
}

// interpreter returns the absolute interpreter a #! line names.
func interpreter(program string) (string, bool) {
	// Without blocking: the file was regular when examined, but a named
	// pipe swapped in since must not hang a check.
	f, err := os.OpenFile(program, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", false
	}
	defer f.Close()
	// A file shorter than 256 bytes is peeked whole, with an EOF.
	line, _ := bufio.NewReaderSize(f, 256).Peek(256)
	if !bytes.HasPrefix(line, []byte("#!")) {
		return "", false
	}
	line = line[2:]
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	fields := strings.Fields(string(line))
	if len(fields) == 0 || !filepath.IsAbs(fields[0]) {
		return "", false
	}
	return fields[0], true
}
