//go:build unix

package approver

// Where the administrator's system rules file lives.
const (
	DefaultSystemConfigDir = "/etc/basis"              // its directory
	SystemConfigDirEnv     = "BASIS_SYSTEM_CONFIG_DIR" // moves the directory
	SystemRulesFile        = "rules.json"              // its name there
)
