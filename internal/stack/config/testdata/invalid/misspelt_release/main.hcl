release "web" {
  chart  = "./charts/web"
  values = [{ db = release.postgress.name }]
}

release "postgres" {
  chart      = "./charts/web"
  depends_on = [release.cahce]
}

release "cache" {
  chart = "./charts/web"
}
