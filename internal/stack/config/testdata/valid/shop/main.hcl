stack "shop" {
  default_namespace = "shop"
}

variable "replicas" {
  type    = number
  default = 2
  validation {
    condition     = var.replicas > 0
    error_message = "replicas must be positive"
  }
}

variable "env" {
  default = "dev"
}

variable "db_password" {
  type      = string
  sensitive = true
}

locals {
  domain = "${var.env}.example.com"
  tags   = { env = var.env, team = "shop" }
}

cluster "dev" {
  kubeconfig = "~/.kube/config"
  context    = "dev"
}

repository "prom" {
  url = "https://prometheus-community.github.io/helm-charts"
}
