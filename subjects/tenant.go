package subjects

// What a tenant's own NATS user may touch: the subjects its agent publishes
// and reads through package client, and the JetStream API calls the client
// makes, each narrowed to the tenant's subjects where the server names them
// in the API subject. A server that grants a tenant's user exactly these
// lets it run its turns and nothing of another tenant's (docs/tenants.md).

// Inbox is the inbox prefix of a tenant's connections (nats.CustomInboxPrefix):
// replies to its requests come there, and its user may subscribe nowhere
// else for them. Its first token is not nats.go's default "_INBOX", so no
// stage's reply can land under it.
func (s Space) Inbox(tenant string) string { return "_INBOX_" + s.prefix + "." + tenant }

// DirectGetLast is the JetStream API subject that reads the last message
// of subject from stream directly (TW_OUT and TW_APPROVAL allow direct
// gets, also in a cluster). The subject read is part of the API subject, so
// a permission can restrict which subjects a user reads this way.
func (s Space) DirectGetLast(stream, subject string) string {
	return jsAPI + "DIRECT.GET." + stream + "." + subject
}

const jsAPI = "$JS.API."

// Permissions are the subjects a NATS user may publish to and subscribe to.
type Permissions struct {
	Publish   []string
	Subscribe []string
}

// TenantPermissions is what a tenant's user needs and is allowed: to
// publish its turns' events and approval decisions and its read requests
// (Read: the stages answer them with the tenant's own messages); to read
// its out, progress and approval subjects and its own inbox; and to read
// the last message of its out and approval subjects by direct get. Nothing
// here reaches another tenant's subjects, a stream's info or listing, a
// stage's stream or consumer, the lease or tools bucket, the object store,
// a purge or a deletion.
//
// No consumer API call is allowed, even one narrowed to the tenant's
// filter: the server checks neither a push consumer's deliver subject
// against the creator's permissions (a tenant could have another's
// subscribers receive its messages) nor how many durable consumers a user
// leaves behind (docs/tenants.md, What a tenant can do).
func (s Space) TenantPermissions(tenant string) Permissions {
	t := s.prefix + "." + tenant + "."
	out, approval := s.OutStream(), s.ApprovalStream()
	return Permissions{
		Publish: []string{
			t + "in.*.*",
			t + "approval.*.*.decision",
			t + "read.*.*",
			s.DirectGetLast(out, t+"out.*"),
			s.DirectGetLast(approval, t+"approval.*.*.*"),
		},
		Subscribe: []string{
			t + "out.*",
			t + "progress.*",
			t + "approval.*.*.request",
			s.Inbox(tenant) + ".>",
		},
	}
}

// Share is one subject the stages' account shares with a tenant's account:
// a service (the tenant sends requests or publishes there, and gets the
// answers) or a stream (the tenant receives what is published there).
type Share struct {
	Service bool
	Subject string
	// Streamed is set for a service that answers one request with many
	// messages (the reader's gap reads).
	Streamed bool
}

// TenantExports are what the stages' account offers, for every tenant: a
// tenant's account imports its own part of each (TenantImports). Only the
// server's configuration says who imports what, so an export may cover
// every tenant.
func (s Space) TenantExports() []Share {
	return s.shares("*")
}

// TenantImports are what tenant's account imports from the stages'
// account: the subjects of TenantPermissions, which are the only ones its
// user may use.
func (s Space) TenantImports(tenant string) []Share {
	return s.shares(tenant)
}

func (s Space) shares(tenant string) []Share {
	t := s.prefix + "." + tenant + "."
	return []Share{
		{Service: true, Subject: t + "in.>"},
		{Service: true, Subject: t + "approval.*.*.decision"},
		{Service: true, Subject: t + "read.>", Streamed: true},
		{Service: true, Subject: s.DirectGetLast(s.OutStream(), t+"out.*")},
		{Service: true, Subject: s.DirectGetLast(s.ApprovalStream(), t+"approval.*.*.*")},
		{Subject: t + "out.*"},
		{Subject: t + "progress.*"},
		{Subject: t + "approval.*.*.request"},
	}
}
