release "web" {
  chart  = "./charts/web"
  values = [{ db = release.postgres.name }]
}
