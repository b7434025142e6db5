//go:build unix && !linux

package worker

import "errors"

// execInPlace says that stage 1 cannot become stage 2 by exec here: it starts stage 2
// as its child.
const execInPlace = false

// becomeStage2 is not used where execInPlace is false.
func becomeStage2(string, string) error { return errors.New("worker: stage 2 by exec needs linux") }

// nameStage2 leaves the process's name as it is.
func nameStage2() {}
