variable "token" {
  type      = string
  sensitive = true
}

release "web" {
  chart         = "./charts/web"
  set_sensitive = { "token" = var.token }
}
