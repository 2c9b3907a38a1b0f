//go:build unix

package approver

// The system layer: rules an administrator sets for every user of a
// machine.
const (
	// DefaultSystemConfigDir is where the system rules file lives.
	DefaultSystemConfigDir = "/etc/basis"
	// SystemConfigDirEnv names the variable that moves it (for tests and
	// unusual installs).
	SystemConfigDirEnv = "BASIS_SYSTEM_CONFIG_DIR"
	// SystemRulesFile is the system rules file's name in that directory.
	SystemRulesFile = "rules.json"
)
