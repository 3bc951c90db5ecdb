package router_test

import (
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/subjects"
)

var sp = subjects.Default()

const tenant = subjects.DefaultTenant

// The stage tests share testenv's helpers under short local names.
var (
	jsFor         = testenv.JS
	encode        = testenv.Encode
	publish       = testenv.Publish
	publishUse    = testenv.PublishUse
	publishEnd    = testenv.PublishEnd
	readTurn      = testenv.ReadTurn
	subjectMsgs   = testenv.SubjectMsgs
	published     = testenv.Published
	waitFor       = testenv.WaitFor
	mustStore     = testenv.Store
	startPipeline = testenv.Pipeline
)
