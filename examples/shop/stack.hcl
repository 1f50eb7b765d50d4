# A three-tier shop: a PostgreSQL database, an API per region and a web
# front end per region. Try:
#
#   convoy validate -C examples/shop
#   convoy graph -C examples/shop
#   convoy graph -C examples/shop --var 'regions=["eu-west"]'

stack "shop" {
  default_namespace = "shop"
}

variable "regions" {
  description = "Regions that get their own API and web front end."
  type        = set(string)
  default     = ["eu-west", "us-east"]
}

variable "api_replicas" {
  type    = number
  default = 2
  validation {
    condition     = var.api_replicas >= 1 && var.api_replicas <= 20
    error_message = "api_replicas must be between 1 and 20."
  }
}

variable "api_image_tag" {
  type    = string
  default = "1.4.2"
}

variable "db_password" {
  description = "PostgreSQL password. The default is for local clusters only: set CONVOY_VAR_db_password elsewhere."
  type        = string
  sensitive   = true
  default     = "dev-only-change-me"
}

locals {
  domain = "shop.example.com"
  labels = {
    "app.kubernetes.io/part-of" = "shop"
  }
}
