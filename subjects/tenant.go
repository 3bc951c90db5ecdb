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
// of subject from stream directly (the stream allows direct gets when it
// is not replicated). The subject read is part of the API subject, so a
// permission can restrict which subjects a user reads this way.
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
// publish its turns' events and approval decisions; to read its out,
// progress and approval subjects and its own inbox; to read its out and
// approval subjects from the streams by direct get or through a consumer
// whose filter is its own (the server puts the filter in the create
// subject and checks the two agree), and to fetch from and delete such a
// consumer by its name. Nothing here reaches another tenant's subjects, a
// stream's info or listing, a stage's stream or consumer, the lease or
// tools bucket, the object store, a purge or a deletion other than of a
// consumer of the out or approval stream, by name.
//
// A consumer's fetch and delete subjects carry its name, not its filter:
// the client's consumers live for one read under a random name, which no
// tenant can list (docs/tenants.md, What a tenant can do).
func (s Space) TenantPermissions(tenant string) Permissions {
	t := s.prefix + "." + tenant + "."
	out, approval := s.OutStream(), s.ApprovalStream()
	return Permissions{
		Publish: []string{
			t + "in.*.*",
			t + "approval.*.*.decision",
			s.DirectGetLast(out, t+"out.*"),
			s.DirectGetLast(approval, t+"approval.*.*.*"),
			jsAPI + "CONSUMER.CREATE." + out + ".*." + t + "out.*",
			jsAPI + "CONSUMER.CREATE." + approval + ".*." + t + "approval.*.*.*",
			jsAPI + "CONSUMER.MSG.NEXT." + out + ".*",
			jsAPI + "CONSUMER.MSG.NEXT." + approval + ".*",
			jsAPI + "CONSUMER.DELETE." + out + ".*",
			jsAPI + "CONSUMER.DELETE." + approval + ".*",
		},
		Subscribe: []string{
			t + "out.*",
			t + "progress.*",
			t + "approval.*.*.request",
			s.Inbox(tenant) + ".>",
		},
	}
}
