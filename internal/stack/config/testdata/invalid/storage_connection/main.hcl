stack "shop" {
  storage {
    driver     = "configmap"
    connection = "postgres://convoy:hunter2hunter2@db:5432/helm"
  }
}
