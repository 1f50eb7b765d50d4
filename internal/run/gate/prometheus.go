package gate

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// DefaultPrometheusTimeout bounds a query when the spec sets no timeout.
const DefaultPrometheusTimeout = 10 * time.Second

// maxResponse bounds the query response read (a vector of many series).
const maxResponse = 8 << 20

// maxSamples bounds the samples an Output lists.
const maxSamples = 20

// Prometheus is a metric gate: an instant query whose every sample must
// be at most Max.
type Prometheus struct {
	// Address is Prometheus's base URL (http or https), with a path
	// prefix when it serves under one: http://prometheus.monitoring:9090.
	Address string
	// Query is PromQL for an instant vector or a scalar.
	Query string
	// Max is the largest value a sample may have.
	Max float64
	// Timeout bounds the query (0: DefaultPrometheusTimeout).
	Timeout time.Duration
}

// EvalPrometheus runs the query at the current time (POST
// /api/v1/query) and passes when it returns data and every sample is a
// number ≤ Max. It fails closed: an address that does not answer in
// time, a status other than 200, an error status, a range vector or a
// string, no sample at all (an empty vector: the metric is missing, or
// the query matches nothing), a NaN sample, each fail the gate with the
// reason in Output (and Err for all but samples over Max and no data).
func EvalPrometheus(ctx context.Context, spec Prometheus) Result {
	res := Result{Gate: KindPrometheus}
	what := fmt.Sprintf("query %q at %s", spec.Query, redactedAddress(spec.Address))
	fail := func(err error) Result {
		res.Err = err
		res.Output = fmt.Sprintf("%s: %v", what, err)
		return res
	}
	if math.IsNaN(spec.Max) {
		return fail(errors.New("max is NaN"))
	}
	if strings.TrimSpace(spec.Query) == "" {
		return fail(errors.New("the query is empty"))
	}
	endpoint, err := queryURL(spec.Address)
	if err != nil {
		return fail(err)
	}
	samples, err := instantQuery(ctx, endpoint, spec.Query, cmp.Or(spec.Timeout, DefaultPrometheusTimeout))
	if err != nil {
		return fail(err)
	}
	if len(samples) == 0 {
		res.Output = fmt.Sprintf("%s: no data (an empty result fails the gate)", what)
		return res
	}
	var over, nan []sample
	for _, s := range samples {
		switch {
		case math.IsNaN(s.value):
			nan = append(nan, s)
		case s.value > spec.Max:
			over = append(over, s)
		}
	}
	lines := make([]string, 0, min(len(samples), maxSamples)+1)
	for i, s := range samples {
		if i == maxSamples {
			lines = append(lines, fmt.Sprintf("… and %d more samples", len(samples)-maxSamples))
			break
		}
		switch {
		case math.IsNaN(s.value):
			lines = append(lines, fmt.Sprintf("%s: not a number", s))
		case s.value > spec.Max:
			lines = append(lines, fmt.Sprintf("%s > max %s", s, formatValue(spec.Max)))
		default:
			lines = append(lines, fmt.Sprintf("%s ≤ max %s", s, formatValue(spec.Max)))
		}
	}
	res.Output = what + ":\n" + strings.Join(lines, "\n")
	switch {
	case len(nan) > 0:
		res.Err = fmt.Errorf("%d of %d samples are NaN (%s)", len(nan), len(samples), nan[0].labels())
		res.Output += "\n" + res.Err.Error()
	case len(over) == 0:
		res.Passed = true
	}
	return res
}

// redactedAddress is the address without a password (a URL's userinfo).
func redactedAddress(address string) string {
	u, err := url.Parse(address)
	if err != nil {
		return "(an address that does not parse)"
	}
	return u.Redacted()
}

// queryURL is the query endpoint under address.
func queryURL(address string) (string, error) {
	u, err := url.Parse(address)
	if err != nil {
		return "", fmt.Errorf("address does not parse: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "", fmt.Errorf("address %s is not an http or https URL", u.Redacted())
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("address %s has a query or fragment: give Prometheus's base URL", u.Redacted())
	}
	return strings.TrimSuffix(u.String(), "/") + "/api/v1/query", nil
}

// sample is one value of the result: a series' (or the scalar's).
type sample struct {
	metric map[string]string // nil for a scalar
	value  float64
}

func (s sample) labels() string {
	if s.metric == nil {
		return "scalar"
	}
	keys := make([]string, 0, len(s.metric))
	for k := range s.metric {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, 0, len(keys))
	name := s.metric["__name__"]
	for _, k := range keys {
		if k != "__name__" {
			parts = append(parts, fmt.Sprintf("%s=%q", k, s.metric[k]))
		}
	}
	return name + "{" + strings.Join(parts, ", ") + "}"
}

func (s sample) String() string { return s.labels() + " " + formatValue(s.value) }

func formatValue(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// apiResponse is the query API's envelope
// (https://prometheus.io/docs/prometheus/latest/querying/api/).
type apiResponse struct {
	Status    string `json:"status"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
	Data      struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	} `json:"data"`
}

// instantQuery posts the query and returns its samples.
func instantQuery(ctx context.Context, endpoint, query string, timeout time.Duration) ([]sample, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	form := url.Values{"query": {query}, "timeout": {timeout.String()}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("no answer within %s: %w", timeout, err)
		}
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	if len(body) > maxResponse {
		return nil, fmt.Errorf("the answer is larger than %d bytes", maxResponse)
	}
	var r apiResponse
	jerr := json.Unmarshal(body, &r)
	switch {
	case jerr == nil && r.Status == "error":
		return nil, fmt.Errorf("Prometheus answered %s: %s: %s", resp.Status, r.ErrorType, r.Error)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("Prometheus answered %s: %s", resp.Status, snippet(body))
	case jerr != nil:
		return nil, fmt.Errorf("the answer is not the query API's JSON: %v", jerr)
	case r.Status != "success":
		return nil, fmt.Errorf("the answer's status is %q, not success", r.Status)
	}
	return decodeResult(r.Data.ResultType, r.Data.Result)
}

// decodeResult reads a scalar or an instant vector; other result types
// fail (a range vector has many values per series: not a gate's).
func decodeResult(resultType string, raw json.RawMessage) ([]sample, error) {
	switch resultType {
	case "scalar":
		var pair []json.RawMessage
		if err := json.Unmarshal(raw, &pair); err != nil {
			return nil, fmt.Errorf("a scalar result that does not decode: %v", err)
		}
		v, err := pointValue(pair)
		if err != nil {
			return nil, err
		}
		return []sample{{value: v}}, nil
	case "vector":
		var series []struct {
			Metric map[string]string `json:"metric"`
			Value  []json.RawMessage `json:"value"`
		}
		if err := json.Unmarshal(raw, &series); err != nil {
			return nil, fmt.Errorf("a vector result that does not decode: %v", err)
		}
		out := make([]sample, len(series))
		for i, s := range series {
			v, err := pointValue(s.Value)
			if err != nil {
				return nil, err
			}
			m := s.Metric
			if m == nil {
				m = map[string]string{}
			}
			out[i] = sample{metric: m, value: v}
		}
		return out, nil
	case "matrix":
		return nil, errors.New("the query returns a range vector: a gate needs an instant vector or a scalar (aggregate it, e.g. max_over_time(Q[5m]))")
	default:
		return nil, fmt.Errorf("the query returns a %s: a gate needs an instant vector or a scalar", cmp.Or(resultType, "result of no type"))
	}
}

// pointValue is the value of a [time, "value"] pair.
func pointValue(pair []json.RawMessage) (float64, error) {
	if len(pair) != 2 {
		return 0, fmt.Errorf("a sample of %d elements, not [time, value]", len(pair))
	}
	var s string
	if err := json.Unmarshal(pair[1], &s); err != nil {
		return 0, fmt.Errorf("a sample value that is not a string: %v", err)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("a sample value %q that is not a number", s)
	}
	return v, nil
}

// snippet is the start of a body for an error message.
func snippet(body []byte) string {
	s := strings.TrimSpace(string(body))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	if s == "" {
		return "(no body)"
	}
	return s
}
