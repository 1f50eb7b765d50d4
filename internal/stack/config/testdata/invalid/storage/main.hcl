stack "shop" {
  storage {
    driver     = "etcd"
    connection = var.db
  }
}

variable "db" {
  default   = "postgres://convoy:hunter2hunter2@db:5432/helm"
  sensitive = true
}
