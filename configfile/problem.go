package configfile

import (
	"context"
	"errors"
	"io/fs"
	"strconv"
)

// Reason is the operating system's part of err — "permission denied",
// "is a directory" — without the path a *fs.PathError quotes, for a
// message that names the file its own way.
func Reason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// ReadProblem words why [Read] or [ReadInfo] with ctx and limit failed
// with err, for a message that names the file first: "does not exist",
// "is not a regular file (it is a named pipe); WHAT must be one", "is
// larger than 16 MiB", "was not read: context canceled", "cannot be read:
// permission denied". what is the kind of file, with its article ("a
// manifest"). It never quotes the file's content.
func ReadProblem(ctx context.Context, err error, limit int64, what string) string {
	var notRegular *NotRegularError
	switch {
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return "was not read: " + err.Error()
	case errors.Is(err, fs.ErrNotExist):
		return "does not exist"
	case errors.As(err, &notRegular):
		return "is not a regular file (it is " + notRegular.Found() + "); " + what + " must be one"
	case errors.Is(err, ErrTooLarge):
		return "is larger than " + sizeText(limit)
	}
	return "cannot be read: " + Reason(err)
}

func sizeText(n int64) string {
	if n <= 0 {
		n = DefaultLimit
	}
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
