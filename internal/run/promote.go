package run

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/convoy-sh/convoy/internal/stack/resolve"
)

// PromoteRequest says what to promote: the charts one environment of the
// stack has deployed, to another.
type PromoteRequest struct {
	// From is the source environment, whose deployed records give each
	// release's chart; To is the target environment, which the plan is
	// for: the session's environment ("": the session's).
	From, To string
	// AllowMissing leaves out of the plan the releases the source
	// environment has not deployed (no record, or a newest record that is
	// failed or pending), naming them, instead of refusing the promotion.
	AllowMissing bool
	// Plan is how the plan is computed (refresh, stats, observe, policy
	// overrides). Its Targets, Selectors and Destroy must be empty: a
	// promotion covers every release the source environment deployed.
	Plan PlanRequest
}

// Promoted is a promotion's plan, and the releases left out of it.
type Promoted struct {
	*Planned
	// Missing are the releases of the target environment left out
	// (AllowMissing), each with why.
	Missing []MissingRelease
}

// MissingRelease is a release of the target environment whose counterpart
// in the source environment has nothing deployed to promote.
type MissingRelease struct {
	Addr config.ReleaseInstanceAddr
	// Name and Namespace are the source release's.
	Name, Namespace string
	// Status is the source's newest record's status ("" when there is
	// none); Reason says it in words.
	Status release.Status
	Reason string
}

func (m MissingRelease) String() string {
	return fmt.Sprintf("%s: %s", m.Addr, m.Reason)
}

// NotDeployedError refuses a promotion: releases of the target
// environment have nothing deployed in the source environment.
type NotDeployedError struct {
	From    string
	Missing []MissingRelease
}

func (e *NotDeployedError) Error() string {
	lines := make([]string, len(e.Missing))
	for i, m := range e.Missing {
		lines[i] = "  " + m.String()
	}
	return fmt.Sprintf("environment %q has not deployed every release to promote (--allow-missing leaves these out):\n%s", e.From, strings.Join(lines, "\n"))
}

// Promote plans the target environment of the stack with, for every
// release instance that has a counterpart at the same address in the
// source environment, exactly the chart the source has deployed: read from
// the source's deployed record (name, version, templates, values and files
// as recorded; no repository or lock file is read for it), so that a chart
// published since cannot slip in. The values are the target environment's
// own evaluation of the stack. Source records are read through the source
// environment's cluster blocks (which its variables may point elsewhere).
//
// The plan is like any other: shown, saved (EncodePlan) and applied with
// Apply, which verifies it as any saved plan; the records it deploys say
// "Promoted from FROM revision N".
//
// A release whose source has nothing deployed (the source environment
// does not declare it, has no record of it, or its newest record is failed
// or pending) is refused with a *NotDeployedError naming it and the
// record's status, unless req.AllowMissing leaves it out of the plan
// (Promoted.Missing). The plan uninstalls nothing.
//
// The session is the target environment's stack: req.To, when set, must
// name it.
func (s *Session) Promote(ctx context.Context, req PromoteRequest) (*Promoted, error) {
	ls, err := s.loaded(true)
	if err != nil {
		return nil, err
	}
	if req.To == "" {
		req.To = ls.Stack.Environment
	}
	o := s.options(req.Plan.Lists)
	if err := checkPromoteRequest(ls.Config, req); err != nil {
		return nil, err
	}
	if req.To != ls.Stack.Environment {
		return nil, fmt.Errorf("promote to environment %q: the stack was opened as environment %q", req.To, ls.Stack.Environment)
	}
	srcFrom := o.Source
	srcFrom.Environment = req.From
	from, err := loadEvaluated(ctx, srcFrom)
	if err != nil {
		return nil, fmt.Errorf("environment %q: %w", req.From, err)
	}
	// Each environment's cluster blocks are its own: they may reach other
	// clusters.
	fromCl := o.forStack(from.Stack).newClusters(nil)
	defer fromCl.Close()
	// The source's releases have the names its records have (count added
	// or removed keeps them), as its own plans give them.
	if err := from.keepMovedNames(ctx, fromCl); err != nil {
		return nil, fmt.Errorf("environment %q: %w", req.From, err)
	}
	type read struct {
		s   promotedSource
		m   *MissingRelease
		err error
	}
	reads := make([]read, len(ls.Order))
	if err := forEach(ctx, o.parallelism(), len(ls.Order), func(i int) {
		addr := ls.Order[i]
		src := from.Stack.Release(addr)
		if src == nil {
			reads[i].m = &MissingRelease{Addr: addr, Reason: fmt.Sprintf("environment %q does not declare it", req.From)}
			return
		}
		reads[i].s, reads[i].m, reads[i].err = readPromotedSource(ctx, fromCl, req.From, from.Stack.ID(), src)
	}); err != nil {
		return nil, err
	}
	var sources []promotedSource
	var missing []MissingRelease
	for i, r := range reads {
		switch {
		case r.err != nil:
			return nil, r.err
		case r.m != nil:
			missing = append(missing, *r.m)
		default:
			r.s.target = ls.Stack.Release(ls.Order[i])
			sources = append(sources, r.s)
		}
	}
	if len(missing) > 0 && !req.AllowMissing {
		return nil, &NotDeployedError{From: req.From, Missing: missing}
	}
	if len(sources) == 0 {
		return nil, fmt.Errorf("environment %q has deployed none of environment %q's releases: nothing to promote", req.From, req.To)
	}

	pinned := map[config.ReleaseInstanceAddr]*chart.Chart{}
	var targets []string
	charts := o.charts()
	for _, s := range sources {
		ch := s.chart
		if ch == nil {
			if ch, err = chartWithSubcharts(charts, ls.Stack.Dir, s); err != nil {
				return nil, err
			}
		}
		pinned[s.target.Addr] = ch
		targets = append(targets, s.target.Addr.String())
	}
	preq := req.Plan
	preq.Targets = targets
	preq.pinned = pinned
	planned, err := planOn(ctx, o, ls, s.clustersOf(o), preq)
	if planned == nil {
		return nil, err
	}
	p := planned.Plan
	for _, s := range sources {
		rc := p.Release(s.target.Addr.String())
		if rc == nil {
			continue
		}
		rc.PromotedFrom = s.promotion
		if rc.KnownAfterApply {
			// Rendered only at apply: the plan carries the chart to render.
			rc.PromotedFrom.Chart = s.record
		}
	}
	return &Promoted{Planned: planned, Missing: missing}, err
}

// checkPromoteRequest refuses a promotion that cannot mean anything: the
// same environment twice, or one the stack does not declare.
func checkPromoteRequest(cfg *config.Config, req PromoteRequest) error {
	if len(req.Plan.Targets) > 0 || len(req.Plan.Selectors) > 0 || req.Plan.Destroy {
		return errors.New("a promotion covers every release the source environment deployed: no targets, selectors or destroy")
	}
	if req.From == "" || req.To == "" {
		return errors.New("a promotion needs a source environment (--from-env) and a target environment (--to-env)")
	}
	if req.From == req.To {
		return fmt.Errorf("--from-env and --to-env both name environment %q: a promotion moves charts from one environment to another", req.From)
	}
	names := slices.Sorted(maps.Keys(cfg.Environments))
	if len(names) == 0 {
		return fmt.Errorf("the stack in %s declares no environment blocks: a promotion moves charts between two of them", cfg.Dir)
	}
	for _, e := range []struct{ flag, name string }{{"--from-env", req.From}, {"--to-env", req.To}} {
		if _, ok := cfg.Environments[e.name]; !ok {
			declared := make([]string, len(names))
			for i, n := range names {
				declared[i] = fmt.Sprintf("%q (%s)", n, cfg.Environments[n].DeclRange)
			}
			return fmt.Errorf("%s %q: the stack declares no such environment; its environment blocks: %s", e.flag, e.name, strings.Join(declared, ", "))
		}
	}
	return nil
}

// promotedSource is what a release promotes: the chart its source
// release's deployed record holds.
type promotedSource struct {
	target    *config.ReleaseInstance
	record    *chart.Chart // as recorded
	chart     *chart.Chart // rebuilt to render
	promotion *plan.Promotion
}

// readPromotedSource reads the records of the source environment's
// release src. A release with nothing deployed comes back as a
// MissingRelease; a record owned by another stack, or whose chart cannot
// be rebuilt, is an error.
func readPromotedSource(ctx context.Context, cl *Clusters, from, stackID string, src *config.ReleaseInstance) (promotedSource, *MissingRelease, error) {
	eng, err := cl.Engine(ctx, src.Cluster)
	if err != nil {
		return promotedSource{}, nil, fmt.Errorf("environment %q: %s: %w", from, src.Addr, err)
	}
	hist, err := eng.Storage(src.Namespace).History(ctx, src.Name)
	if err != nil {
		return promotedSource{}, nil, fmt.Errorf("environment %q: %s: read the records of %s/%s: %w", from, src.Addr, src.Namespace, src.Name, err)
	}
	miss := &MissingRelease{Addr: src.Addr, Name: src.Name, Namespace: src.Namespace}
	if len(hist) == 0 {
		miss.Reason = fmt.Sprintf("environment %q has no release %s/%s", from, src.Namespace, src.Name)
		return promotedSource{}, miss, nil
	}
	last := hist[len(hist)-1]
	if last.Info == nil || last.Info.Status != release.StatusDeployed {
		status := release.StatusUnknown
		if last.Info != nil {
			status = last.Info.Status
		}
		miss.Status = status
		miss.Reason = fmt.Sprintf("environment %q's release %s/%s is %s at revision %d, not deployed", from, src.Namespace, src.Name, status, last.Version)
		return promotedSource{}, miss, nil
	}
	if owner := last.Labels[release.StackLabel]; owner != stackID {
		by := fmt.Sprintf("stack %q", owner)
		if owner == "" {
			by = "no convoy stack (helm, or a stack that let it go)"
		}
		return promotedSource{}, nil, fmt.Errorf("environment %q: %s: release %s/%s revision %d was deployed by %s, not stack %q: it is not this environment's deployment to promote", from, src.Addr, src.Namespace, src.Name, last.Version, by, stackID)
	}
	// A chart with subcharts is not in its record whole: it is looked for
	// in the stack's own charts (Promote, sameRecordedChart).
	ch, err := chart.FromRecord(last.Chart)
	if err != nil && !errors.Is(err, chart.ErrRecordLacksSubcharts) {
		return promotedSource{}, nil, fmt.Errorf("environment %q: %s: the chart of release %s/%s revision %d: %w", from, src.Addr, src.Namespace, src.Name, last.Version, err)
	}
	digest, err := chartDigest(last.Chart)
	if err != nil {
		return promotedSource{}, nil, err
	}
	clusterName := ""
	if src.Cluster != nil {
		clusterName = src.Cluster.Name
	}
	return promotedSource{
		record: last.Chart,
		chart:  ch,
		promotion: &plan.Promotion{
			Environment: from, Name: src.Name, Namespace: src.Namespace, Cluster: clusterName,
			Revision: last.Version, ChartDigest: digest,
		},
	}, nil, nil
}

// chartDigest is "sha256:" and the digest of a recorded chart's JSON (as
// the record holds it: maps marshal in key order).
func chartDigest(ch *chart.Chart) (string, error) {
	b, err := json.Marshal(ch)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// promotedCharts are the charts a plan's promoted releases render with
// when they are rendered at apply (their values were known only then):
// rebuilt from the recorded chart the plan carries, or, for a chart with
// subcharts, the stack's own when it still is that chart.
func promotedCharts(p *plan.Plan, charts *resolve.Charts, st *config.Stack) (map[config.ReleaseInstanceAddr]*chart.Chart, error) {
	var out map[config.ReleaseInstanceAddr]*chart.Chart
	for _, rc := range p.Releases {
		pf := rc.PromotedFrom
		if pf == nil || pf.Chart == nil || rc.Addr.IsRemoved() {
			continue
		}
		ch, err := chart.FromRecord(pf.Chart)
		if errors.Is(err, chart.ErrRecordLacksSubcharts) {
			if inst := st.Release(rc.Addr.Instance); inst != nil {
				ch, err = chartWithSubcharts(charts, st.Dir, promotedSource{target: inst, record: pf.Chart, promotion: pf})
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s: the chart promoted from %s: %w", rc.Addr, pf.Environment, err)
		}
		if out == nil {
			out = map[config.ReleaseInstanceAddr]*chart.Chart{}
		}
		out[rc.Addr.Instance] = ch
	}
	return out, nil
}

// verifyPromotions refuses a saved promotion whose source environment
// moved since the plan was made: each promoted release's source must
// still be deployed at the revision the plan read, with the same chart.
// A plan that promotes nothing passes without reading anything.
func verifyPromotions(ctx context.Context, o Options, p *plan.Plan) error {
	byEnv := map[string][]*plan.ReleaseChange{}
	for _, rc := range p.Releases {
		if rc.PromotedFrom != nil && !rc.Addr.IsRemoved() {
			byEnv[rc.PromotedFrom.Environment] = append(byEnv[rc.PromotedFrom.Environment], rc)
		}
	}
	var changes []string
	for _, env := range slices.Sorted(maps.Keys(byEnv)) {
		src := o.Source
		src.Environment = env
		from, err := loadEvaluated(ctx, src)
		if err != nil {
			return fmt.Errorf("environment %q, which the plan promotes from: %w", env, err)
		}
		cl := o.forStack(from.Stack).newClusters(nil)
		// Closed when the promotions are verified (the records'
		// database, if any).
		defer cl.Close()
		if err := from.keepMovedNames(ctx, cl); err != nil {
			return fmt.Errorf("environment %q, which the plan promotes from: %w", env, err)
		}
		for _, rc := range byEnv[env] {
			pf := rc.PromotedFrom
			inst := from.Stack.Release(rc.Addr.Instance)
			if inst == nil {
				changes = append(changes, fmt.Sprintf("environment %q no longer declares %s, which the plan promotes from it; run convoy promote again", env, rc.Addr))
				continue
			}
			s, miss, err := readPromotedSource(ctx, cl, env, from.Stack.ID(), inst)
			switch {
			case err != nil:
				return err
			case miss != nil:
				changes = append(changes, fmt.Sprintf("%s: %s since the plan (it promotes revision %d); run convoy promote again", rc.Addr, miss.Reason, pf.Revision))
			case s.promotion.Revision != pf.Revision || s.promotion.ChartDigest != pf.ChartDigest:
				changes = append(changes, fmt.Sprintf("%s: environment %q's release %s/%s is at revision %d now, not %d as the plan promotes; run convoy promote again", rc.Addr, env, inst.Namespace, inst.Name, s.promotion.Revision, pf.Revision))
			}
		}
	}
	if len(changes) > 0 {
		return &StaleError{Changes: changes}
	}
	return nil
}

// chartWithSubcharts is the chart of a promoted release whose chart has
// subcharts, which its record lacks: the chart the target environment
// loads (its local path, or the lock file's version from the chart cache,
// never the network) when it is the recorded one — same name and version,
// the same templates, files, schema and Chart.lock — so the subcharts are
// those its Chart.lock pins. Otherwise the promotion is refused: there is
// no other copy of the chart to take.
func chartWithSubcharts(charts *resolve.Charts, dir string, s promotedSource) (*chart.Chart, error) {
	rec, pf := s.record, s.promotion
	want := fmt.Sprintf("%s %s", rec.Metadata.Name, rec.Metadata.Version)
	refuse := func(why string) error {
		return fmt.Errorf("%s: the chart %s that environment %q deployed (revision %d) has subcharts, which release records do not keep, so it is promoted from the stack's own chart only when that is the same chart; %s", s.target.Addr, want, pf.Environment, pf.Revision, why)
	}
	ch, err := charts.Load(dir, s.target)
	if err != nil {
		return nil, refuse(fmt.Sprintf("the stack's chart cannot be loaded: %v", err))
	}
	if got := fmt.Sprintf("%s %s", ch.Name(), ch.Metadata.Version); got != want {
		return nil, refuse(fmt.Sprintf("the stack's chart is %s (the lock file, or the local chart, moved on: lock %s with convoy init, or deploy it to environment %q first)", got, want, pf.Environment))
	}
	if what := recordedChartDiffers(ch, rec); what != "" {
		return nil, refuse(fmt.Sprintf("the stack's chart %s differs from it in %s", want, what))
	}
	return ch, nil
}

// recordedChartDiffers names what of a chart's own content (its subcharts
// aside) differs from a recorded chart's ("" when nothing does): the
// templates, the other files, the schema, Chart.lock (which pins the
// subcharts).
func recordedChartDiffers(ch, rec *chart.Chart) string {
	sameFiles := func(a, b []*chart.File) bool {
		return slices.EqualFunc(a, b, func(x, y *chart.File) bool {
			return x != nil && y != nil && x.Name == y.Name && bytes.Equal(x.Data, y.Data)
		})
	}
	lockDigest := func(l *chart.Lock) string {
		if l == nil {
			return ""
		}
		return l.Digest
	}
	switch {
	case !sameFiles(ch.Templates, rec.Templates):
		return "its templates"
	case !sameFiles(ch.Files, rec.Files):
		return "its files"
	case !bytes.Equal(ch.Schema, rec.Schema):
		return "values.schema.json"
	case lockDigest(ch.Lock) != lockDigest(rec.Lock):
		return "Chart.lock"
	}
	return ""
}
