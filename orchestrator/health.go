package orchestrator

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcs-go/mcs"
)

// maxNamed is how many drivers the Detail of a health result names.
const maxNamed = 10

// Healthcheck combines the health of the first-level drivers: the worst status
// (OK < UNKNOWN < WARNING < ERROR) over the drivers that implement
// [mcs.SupportsHealthcheck], and OK when none does. A status that is not one of the
// four counts as UNKNOWN; a driver's healthcheck that panics or does not answer before
// ctx ends counts as ERROR; so does a driver left out of the tool listing because its
// ListTools failed, and a listing that failed as a whole. A tool left out of the
// listing because its exposed name or description became invalid after its
// registration (a driver whose tools changed, a nested orchestrator that gained a
// long name) counts as WARNING. Nested orchestrators report through their own
// Healthcheck, so the check cascades.
//
// The checks run concurrently and Healthcheck returns when all answered or ctx ended.
// The Detail names the drivers with the worst status, as "label: detail" joined by
// "; " (at most ten, then how many more). Safe for concurrent use.
func (o *Orchestrator) Healthcheck(ctx context.Context) mcs.HealthResult {
	findings, set := o.listingFindings(ctx)
	findings = append(findings, checkDrivers(ctx, set)...)
	return combine(findings)
}

// finding is one line of a health report: a driver's label ("" for the
// orchestrator itself) and what was found.
type finding struct {
	label string
	res   mcs.HealthResult
}

// listingFindings reports what the current listing left out (drivers whose
// listing failed: ERROR; tools that became invalid: WARNING) or that it failed as a
// whole (ERROR), and returns the driver set the listing was built over.
func (o *Orchestrator) listingFindings(ctx context.Context) ([]finding, *driverSet) {
	var findings []finding
	set := o.set.Load()
	l, err := o.current(ctx)
	switch {
	case l != nil && l.err != nil:
		findings = append(findings, finding{"", mcs.HealthResult{Status: mcs.HealthError, Detail: "the tool listing failed: " + l.err.Error()}})
	case l != nil:
		set = l.stamp.set
		for _, f := range l.failed {
			findings = append(findings, finding{f.Label, mcs.HealthResult{Status: mcs.HealthError, Detail: "cannot list its tools: " + f.Err.Error()}})
		}
		for _, err := range l.dropped {
			findings = append(findings, finding{"", mcs.HealthResult{Status: mcs.HealthWarning, Detail: "tool left out: " + err.Error()}})
		}
	case err != nil:
		findings = append(findings, finding{"", mcs.HealthResult{Status: mcs.HealthError, Detail: "the tool listing did not finish: " + err.Error()}})
	}
	return findings, set
}

// checkDrivers runs the healthchecks of the drivers of set that have one,
// concurrently, and returns their results in registration order once all answered
// or ctx ended (a check that did not answer, or panicked, is ERROR; an unknown
// status is UNKNOWN).
func checkDrivers(ctx context.Context, set *driverSet) []finding {
	type pending struct {
		label string
		ch    chan mcs.HealthResult
	}
	var checks []pending
	for _, e := range set.entries {
		h, ok := e.Driver.(mcs.SupportsHealthcheck)
		if !ok {
			continue
		}
		ch := make(chan mcs.HealthResult, 1)
		go func() {
			defer func() {
				if v := recover(); v != nil {
					ch <- mcs.HealthResult{Status: mcs.HealthError, Detail: fmt.Sprintf("healthcheck panicked: %v", v)}
				}
			}()
			ch <- h.Healthcheck(ctx)
		}()
		checks = append(checks, pending{e.Label, ch})
	}
	findings := make([]finding, 0, len(checks))
	for _, c := range checks {
		var r mcs.HealthResult
		select {
		case r = <-c.ch:
		default:
			select {
			case r = <-c.ch:
			case <-ctx.Done():
				r = mcs.HealthResult{Status: mcs.HealthError, Detail: "healthcheck did not answer in time: " + context.Cause(ctx).Error()}
			}
		}
		findings = append(findings, finding{c.label, knownStatus(r)})
	}
	return findings
}

// knownStatus turns a status that is not one of the four into UNKNOWN.
func knownStatus(r mcs.HealthResult) mcs.HealthResult {
	switch r.Status {
	case mcs.HealthOK, mcs.HealthWarning, mcs.HealthError, mcs.HealthUnknown:
		return r
	}
	return mcs.HealthResult{Status: mcs.HealthUnknown, Detail: strings.TrimSuffix(fmt.Sprintf("unknown status %q: %s", r.Status, r.Detail), ": ")}
}

// combine reports the worst status of findings, naming the findings that have it
// (at most maxNamed); OK when there are none.
func combine(findings []finding) mcs.HealthResult {
	if len(findings) == 0 {
		return mcs.HealthResult{Status: mcs.HealthOK, Detail: "no registered driver reports its health"}
	}
	worst := mcs.HealthOK
	for _, f := range findings {
		if f.res.Status.Severity() > worst.Severity() {
			worst = f.res.Status
		}
	}
	var named []string
	more := 0
	for _, f := range findings {
		if f.res.Status != worst {
			continue
		}
		if len(named) == maxNamed {
			more++
			continue
		}
		s := f.label
		switch {
		case s == "":
			s = f.res.Detail
		case f.res.Detail != "":
			s += ": " + f.res.Detail
		}
		named = append(named, s)
	}
	detail := strings.Join(named, "; ")
	if more > 0 {
		detail += fmt.Sprintf("; and %d more", more)
	}
	return mcs.HealthResult{Status: worst, Detail: detail}
}
