package worker

// ExecDyingWithParent is execDyingWithParent, for the external tests' scenarios.
var ExecDyingWithParent = execDyingWithParent
