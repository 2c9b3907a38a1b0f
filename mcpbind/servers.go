package mcpbind

// ServersIn names file's servers, in use and shadowed.
func (c *Config) ServersIn(file string) (servers, shadowed []string) {
	for _, s := range c.Servers {
		if s.File == file {
			servers = append(servers, s.Name)
		}
	}
	for _, s := range c.Shadowed {
		if s.File == file {
			shadowed = append(shadowed, s.Name)
		}
	}
	return servers, shadowed
}

// StdioServer is the stdio server a tool's source ("/repo/.mcp.json#gh")
// names; false for a server that is no program, or none here.
func (c *Config) StdioServer(source string) (string, bool) {
	for _, s := range c.Servers {
		if sourceOf(s) == source && s.Type == TypeStdio {
			return s.Name, true
		}
	}
	return "", false
}
