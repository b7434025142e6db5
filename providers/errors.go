package providers

import (
	"errors"
	"fmt"
)

// ErrUsage marks the errors that are a mistake in the flags, the environment or a spec
// (a missing key, an unknown provider, a broken script) rather than a failure.
var ErrUsage = errors.New("usage error")

// usageError is an error in which errors.Is finds ErrUsage.
type usageError struct{ err error }

func (e usageError) Error() string        { return e.err.Error() }
func (e usageError) Unwrap() error        { return e.err }
func (e usageError) Is(target error) bool { return target == ErrUsage }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }
