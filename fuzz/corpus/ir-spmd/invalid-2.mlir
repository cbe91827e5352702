part.mesh @mesh = <["dp"=0]>
