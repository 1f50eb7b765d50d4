package gate

// Gate kinds, as Result.Gate names them.
const (
	KindCEL        = "cel"
	KindPrometheus = "prometheus"
)

// Result is one evaluation of a gate.
type Result struct {
	// Gate is the gate's kind (KindCEL, KindPrometheus).
	Gate string
	// Passed is true only when the gate holds; an error never passes.
	Passed bool
	// Output says what was evaluated and what came of it, for people (a
	// pipeline's status): the expression's value and the objects that
	// made it false, or the query's samples and the maximum.
	Output string
	// Err is why the gate could not be evaluated (an expression that
	// errors, a Prometheus that does not answer); Passed is then false.
	Err error
}
