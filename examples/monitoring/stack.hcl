# A monitoring stack: Alertmanager, Prometheus sending alerts to it, and
# Grafana reading from Prometheus.
#
#   convoy validate -C examples/monitoring
#   convoy graph -C examples/monitoring --format mermaid

stack "monitoring" {
  default_namespace = "monitoring"
}

variable "retention" {
  description = "How long Prometheus keeps samples."
  type        = string
  default     = "15d"
  validation {
    condition     = can(regex("^[0-9]+(h|d|w|y)$", var.retention))
    error_message = "retention is a number followed by h, d, w or y, such as 15d."
  }
}

variable "grafana_admin_password" {
  type      = string
  sensitive = true
  default   = "admin-dev-only"
}

variable "scrape_interval" {
  type    = string
  default = "30s"
}

locals {
  common_labels = { team = "platform", stack = "monitoring" }
}
