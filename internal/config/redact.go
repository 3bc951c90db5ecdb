package config

import (
	"net/url"
	"strings"
)

// redactURL is raw with the credentials a URL carries redacted: the
// password of its userinfo (the whole userinfo when it is a lone name,
// which NATS takes as a token) and every query value, as API keys and
// tokens travel in queries (?key=, ?token=); the query's names stay. A
// value that does not parse as a URL is shown only when it has no "@" or
// "?" that could hold one.
func redactURL(raw string) string {
	if raw == "" {
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" {
		// "host:4222" parses with an opaque part, and "user:pw@host"
		// with its password in it.
		if strings.ContainsAny(raw, "@?") {
			return Redacted
		}
		return raw
	}
	userinfo := ""
	if u.User != nil {
		userinfo = Redacted + "@"
		if _, ok := u.User.Password(); ok {
			userinfo = url.User(u.User.Username()).String() + ":" + Redacted + "@"
		}
		u.User = nil
	}
	if u.RawQuery != "" {
		pairs := strings.Split(u.RawQuery, "&")
		for i, p := range pairs {
			if name, _, ok := strings.Cut(p, "="); ok {
				pairs[i] = name + "=" + Redacted
			}
		}
		u.RawQuery = strings.Join(pairs, "&")
	}
	s := u.String()
	if userinfo != "" {
		prefix := "//"
		if u.Scheme != "" {
			prefix = u.Scheme + ":" + prefix
		}
		s = prefix + userinfo + strings.TrimPrefix(s, prefix)
	}
	return s
}

// redactURLs is redactURL of each of a comma-separated list of URLs.
func redactURLs(raw string) string {
	urls := strings.Split(raw, ",")
	for i, u := range urls {
		urls[i] = redactURL(strings.TrimSpace(u))
	}
	return strings.Join(urls, ",")
}
