part.mesh @mesh = <["dp"=2]>
