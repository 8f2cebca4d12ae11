package platform

import (
	"errors"
	"log"
	"os"
	"path/filepath"
	"time"
)

// A function's lifecycle as Lambda shows it. CreateFunction answers State Pending (reason code
// Creating) and the function becomes Active once it is ready; UpdateFunctionCode and
// UpdateFunctionConfiguration answer LastUpdateStatus InProgress, then Successful. Meanwhile
// Lambda refuses to invoke a Pending function and to update one whose update is in progress
// (ResourceConflictException), which is what boto3's function_active_v2 and
// function_updated_v2 waiters are for.
//
// An update also takes time on AWS (seconds, unpublished): here it stays InProgress at least
// Config.UpdateWindow (DefaultUpdateWindow from the command), so that a call right after an
// update finds it in progress as AWS's recordings do (test_lambda_code_location_zipfile,
// test_publish_with_update, test_lambda_concurrent_*_updates), and callers must wait for it as
// they must on AWS. The window is not a measured AWS figure (docs/platform.md).
//
// "Ready" is real work here, done in the background after the answer: a new package (create,
// code update) is unpacked once with the unpacker a cold start uses (paths, modes, sizes) into
// the code store, where every instance of it then mounts it read-only (codestore.go); a configuration update has no package to check and ends at once. A
// package that cannot be unpacked leaves the function Failed (create) or the update Failed,
// with Lambda's reason code InvalidZipFileException; a missing or non-executable bootstrap does
// not, as on Lambda: invocations answer Runtime.InvalidEntrypoint. Invocations during an update
// already get the new code and configuration (Lambda keeps running the previous ones until the
// update is done).

const (
	reasonCreating = "The function is being created."
)

// setPending: a function being created has no LastUpdateStatus on AWS (the recorded
// create_response of every test_lambda_api test); it answers Successful once Active.
func setPending(c *FunctionConfiguration) {
	c.State, c.StateReason, c.StateReasonCode = "Pending", reasonCreating, "Creating"
	c.LastUpdateStatus, c.LastUpdateStatusReason, c.LastUpdateStatusReasonCode = "", "", ""
}

func setInProgress(c *FunctionConfiguration) {
	c.LastUpdateStatus, c.LastUpdateStatusReason, c.LastUpdateStatusReasonCode = "InProgress", reasonCreating, "Creating"
}

// errNotReady is Lambda's answer to an operation on a function that is not Active.
func errNotReady(state string) error {
	return errConflict("The operation cannot be performed at this time. The function is currently in the following state: %s", state)
}

// updatable refuses an update (or a publish) of a function still being created or updated.
func updatable(f *Function) error {
	if f.Config.State == "Pending" {
		return errNotReady("Pending")
	}
	if f.Config.LastUpdateStatus == "InProgress" {
		return errConflict("The operation cannot be performed at this time. An update is in progress for resource: %s", f.key().arn())
	}
	return nil
}

// invocable refuses to invoke a version that is not Active.
func invocable(c FunctionConfiguration) error {
	if c.State != "Active" {
		return errNotReady(c.State)
	}
	return nil
}

// startPreparing runs the work that makes generation gen of a function ready, in the background;
// unpack says whether it has a new package to check. An update (hold > 0) stays InProgress at
// least hold after it was answered (Config.UpdateWindow), however fast the work is.
func (p *Platform) startPreparing(key fnKey, gen int, unpack bool, hold time.Duration) {
	until := time.Now().Add(hold)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.prepare(key, gen, unpack, until)
	}()
}

// prepare unpacks the function's package into a scratch directory and records the outcome:
// Active/Successful, or Failed. A generation that has been replaced or deleted meanwhile is
// left alone (its successor has its own preparation).
func (p *Platform) prepare(key fnKey, gen int, unpack bool, until time.Time) {
	beforePrepare(key)
	failure := ""
	if unpack {
		failure = p.tryUnpack(key)
	}
	if wait := time.Until(until); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-p.ctx.Done():
			t.Stop()
		}
	}
	if p.ctx.Err() != nil {
		return // the platform stopped: the next start prepares it again
	}
	_, err := p.replace(key, func(next *Function) error {
		if next.Generation != gen {
			return errConflict("superseded")
		}
		p.finish(&next.Config, failure)
		for i, v := range next.Versions {
			if v.Generation == gen && v.Config.State == "Pending" {
				done := *v
				p.finish(&done.Config, failure)
				next.Versions[i] = &done
			}
		}
		return nil
	})
	if err != nil && !isConflict(err) && !isNotFound(err) {
		log.Printf("prepare %s: %v", key.arn(), err)
	}
}

// beforePrepare lets tests hold a function in Pending or InProgress.
var beforePrepare = func(fnKey) {}

// prepareDir held the scratch directories of earlier versions' preparations; a start removes it.
func (p *Platform) prepareDir() string { return filepath.Join(p.cfg.DataDir, "preparing") }

// tryUnpack unpacks the function's package into the code store, where its instances will mount
// it (codestore.go), with the unpacker a cold start would use, and says why it could not (""
// when it could). The function's layers are unpacked there too, for its first cold start; a
// layer that fails is no failure here (its cold starts report it, as before).
func (p *Platform) tryUnpack(key fnKey) string {
	p.mu.Lock()
	f := p.functions[key]
	var cfg FunctionConfiguration
	if f != nil {
		cfg = f.Config
	}
	opt := p.optEntry(cfg.Layers)
	p.mu.Unlock()
	ref, err := p.code.acquire(codeEntryName(cfg.CodeSha256), buildPackage(p.store.codePath(key)))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "Lambda was unable to unzip the deployment package: " + err.Error()
	}
	ref.release()
	if len(cfg.Layers) > 0 {
		if ref, err := p.code.acquire(opt, buildLayers(p.layerZips(cfg.Layers), layerLabel)); err == nil {
			ref.release()
		}
	}
	return ""
}

// finish ends a configuration's creation or update, failed when failure is not "".
func (p *Platform) finish(c *FunctionConfiguration, failure string) {
	created := c.State == "Pending"
	// AWS issues a new RevisionId when a creation or an update ends, whatever its outcome
	// (TestLambdaRevisions and every recorded get after a wait: <uuid:2> after <uuid:1>).
	c.RevisionId = newRevision()
	c.LastUpdateStatusReason, c.LastUpdateStatusReasonCode = "", ""
	switch {
	case failure == "":
		c.LastUpdateStatus = "Successful"
		if created || c.State == "Active" {
			// An Active function has no reason on Lambda; here it says where the interpreter's
			// version differs from the runtime's (runtimes.go: RuntimeNote) for want of the exact
			// one (interpreters.go), "" otherwise.
			c.State, c.StateReason, c.StateReasonCode = "Active", p.runtimeNote(c.Runtime), ""
		}
	case created:
		c.State, c.StateReason, c.StateReasonCode = "Failed", failure, "InvalidZipFileException"
		c.LastUpdateStatus, c.LastUpdateStatusReason, c.LastUpdateStatusReasonCode = "Failed", failure, "InvalidZipFileException"
	default:
		c.LastUpdateStatus, c.LastUpdateStatusReason, c.LastUpdateStatusReasonCode = "Failed", failure, "InvalidZipFileException"
	}
}

// resumePreparing restarts the preparations a stopped platform left unfinished.
func (p *Platform) resumePreparing() {
	for key, f := range p.functions {
		if f.Config.State == "Pending" || f.Config.LastUpdateStatus == "InProgress" {
			p.startPreparing(key, f.Generation, true, 0)
		}
	}
}

func isConflict(err error) bool {
	var c *conflictError
	return errors.As(err, &c)
}

func isNotFound(err error) bool {
	var n *notFoundError
	return errors.As(err, &n)
}
